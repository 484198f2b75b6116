"""POST /v1/answer — parse, call the service, reply."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.api.resolver import ERROR_RESPONSES, build_resolver, current_request_id, current_workspace_id
from neural_memory.models import AnswerRequest, AnswerResponse
from neural_memory.observability import logger, metrics, tracer
from neural_memory.operations import BY_NAME
from neural_memory.runtime import get_service

app = build_resolver()
ANSWER = BY_NAME["answer"]


@app.post(
    ANSWER.resolver_path,
    summary=ANSWER.summary,
    description="An answer grounded in the caller's observations; every citation is a retrieved observation.",
    responses={200: {"description": "The answer and its citations"}, **ERROR_RESPONSES},
    tags=["answer"],
)
@tracer.capture_method(capture_response=False)  # observation content never goes to X-Ray
def answer(request: Annotated[AnswerRequest, Body()]) -> AnswerResponse:
    """Answer from the caller's workspace."""
    return get_service().answer(current_workspace_id(app), request, current_request_id(app))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """API Gateway REST proxy entry point."""
    return app.resolve(event, context)
