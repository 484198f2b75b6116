"""POST /v1/search — parse, call the service, reply."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.http import ERROR_RESPONSES, build_resolver, current_request_id, current_workspace_id
from neural_memory.models import SearchRequest, SearchResponse
from neural_memory.observability import logger, metrics, tracer
from neural_memory.service import get_service

app = build_resolver()


@app.post(
    "/v1/search",
    summary="Search observations",
    description="Filtered hybrid search over the caller's workspace, with scores and per-stage latency.",
    responses={200: {"description": "Results, best first"}, **ERROR_RESPONSES},
    tags=["search"],
)
@tracer.capture_method(capture_response=False)  # observation content never goes to X-Ray
def search(request: Annotated[SearchRequest, Body()]) -> SearchResponse:
    """Search the caller's workspace."""
    return get_service().search(current_workspace_id(app), request, current_request_id(app))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """API Gateway REST proxy entry point."""
    return app.resolve(event, context)
