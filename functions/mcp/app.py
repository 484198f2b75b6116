"""POST /mcp (GET and DELETE: 405) — MCP's streamable HTTP transport, stateless: the JSON-RPC
message to ``api/mcp_endpoint.py``, the caller's workspace (the authorizer's) to the tools."""

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.agent_tools.workspace import WorkspaceMemory
from neural_memory.api import mcp_endpoint
from neural_memory.api.resolver import ERROR_RESPONSES, build_resolver, current_request_id, current_workspace_id
from neural_memory.clock import utcnow
from neural_memory.observability import logger, metrics, tracer
from neural_memory.service import get_service

# The store is built on the first tool call, not for the handshake or the listing.
app = build_resolver(needs_service=False)
_JSON_RPC: dict[int, OpenAPIResponse] = {
    200: {"description": "The JSON-RPC reply (a result, or an error for an unknown method or bad params)"},
    202: {"description": "A notification or response, accepted (no body)"},
}


def _reply(reply: mcp_endpoint.HttpReply) -> Response[str]:
    return Response(status_code=reply.status, body=reply.body, headers=reply.headers)


def _memory() -> WorkspaceMemory:
    return WorkspaceMemory(get_service(), current_workspace_id(app), current_request_id(app))


@app.post(
    "/mcp",
    summary="MCP (streamable HTTP, stateless)",
    description="One JSON-RPC message of the Model Context Protocol (initialize, ping, tools/list, tools/call; "
    "notifications are accepted) and its reply as application/json. The tools are neural-memory mcp's, on the "
    "key's workspace. A body that is no JSON-RPC message is a 400 with a JSON-RPC error.",
    responses={**_JSON_RPC, **ERROR_RESPONSES},
    tags=["mcp"],
)
@tracer.capture_method(capture_response=False)  # tool calls carry observation content
def post() -> Response[str]:
    """One JSON-RPC message from an MCP client."""
    event = app.current_event
    return _reply(mcp_endpoint.serve_post(event.decoded_body or "", event.headers, _memory, utcnow()))


@app.route(
    "/mcp",
    method=["GET", "DELETE"],
    summary="MCP's session stream and end (none: 405)",
    responses={405: {"description": "No sessions: POST each message"}, **ERROR_RESPONSES},
    tags=["mcp"],
)
def without_session() -> Response[str]:
    """A stateless server has no stream to open and no session to end."""
    return _reply(mcp_endpoint.not_allowed(app.current_event.http_method))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """API Gateway REST proxy entry point."""
    return app.resolve(event, context)
