"""API Gateway REQUEST authorizer: API key → workspace, and who acts (the key's id, name and role),
put in the request context for the handlers, which enforce the role; a refused key is denied with
what is wrong with it.

The same handler authorizes requests of the local gateway (``make serve``), with the embedded key store.
"""

from typing import Any

from aws_lambda_powertools.utilities.data_classes import event_source
from aws_lambda_powertools.utilities.data_classes.api_gateway_authorizer_event import (
    APIGatewayAuthorizerRequestEvent,
    APIGatewayAuthorizerResponse,
)
from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.api.authorizer import Refused, admit
from neural_memory.observability import logger


@logger.inject_lambda_context
@event_source(data_class=APIGatewayAuthorizerRequestEvent)
def lambda_handler(event: APIGatewayAuthorizerRequestEvent, context: LambdaContext) -> dict[str, Any]:
    """Allow with ``workspaceId``, ``keyId``, ``keyName`` and ``role`` in the context, or Deny with ``message`` saying
    what is wrong with the key (a header not reading ``Bearer <key>``, or a key that is not valid).

    A Deny, not the ``Unauthorized`` exception: API Gateway's UNAUTHORIZED response cannot read
    anything the function says, while its ACCESS_DENIED response reads the Deny's context
    (``$context.authorizer.message``) and the stack answers it as a 401 (infra/constructs/api.py).
    A request without the header never gets here: API Gateway refuses it itself (no identity source).
    """
    arn = event.parsed_arn
    verdict = admit(event.headers)
    if isinstance(verdict, Refused):
        logger.info("request refused", extra={"problem": verdict.problem})
        denied = APIGatewayAuthorizerResponse(
            principal_id="unauthenticated",
            region=arn.region,
            aws_account_id=arn.aws_account_id,
            api_id=arn.api_id,
            stage=arn.stage,
            context={"message": verdict.problem},
        )
        denied.deny_all_routes()  # cached per header value for the TTL, like an Allow
        return denied.asdict()
    policy = APIGatewayAuthorizerResponse(
        principal_id=verdict.workspace_id,
        region=arn.region,
        aws_account_id=arn.aws_account_id,
        api_id=arn.api_id,
        stage=arn.stage,
        context=dict(verdict.context),
    )
    policy.allow_all_routes()
    return policy.asdict()
