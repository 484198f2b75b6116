"""API Gateway REQUEST authorizer: API key → workspace (and the key's id: who acts), put in the
request context for the handlers.

The same handler authorizes requests of the local gateway (``make serve``), with the embedded key store.
"""

from typing import Any

from aws_lambda_powertools.utilities.data_classes import event_source
from aws_lambda_powertools.utilities.data_classes.api_gateway_authorizer_event import (
    APIGatewayAuthorizerRequestEvent,
    APIGatewayAuthorizerResponse,
)
from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.auth.keys import extract_api_key, identify
from neural_memory.errors import Unauthorized
from neural_memory.observability import logger
from neural_memory.runtime import get_key_store


@logger.inject_lambda_context
@event_source(data_class=APIGatewayAuthorizerRequestEvent)
def lambda_handler(event: APIGatewayAuthorizerRequestEvent, context: LambdaContext) -> dict[str, Any]:
    """Allow with ``workspaceId`` and ``keyId`` in the context, or answer 401 (API Gateway's
    ``Unauthorized``)."""
    arn = event.parsed_arn
    try:
        key = identify(get_key_store(), extract_api_key(event.headers))
    except Unauthorized:
        logger.info("request refused: missing or invalid API key")
        raise Exception("Unauthorized") from None  # API Gateway maps this exact message to 401
    policy = APIGatewayAuthorizerResponse(
        principal_id=key.workspace_id,
        region=arn.region,
        aws_account_id=arn.aws_account_id,
        api_id=arn.api_id,
        stage=arn.stage,
        context={"workspaceId": key.workspace_id, "keyId": key.key_id},
    )
    policy.allow_all_routes()
    return policy.asdict()
