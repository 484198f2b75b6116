"""POST /mcp (GET and DELETE: 405) — MCP's streamable HTTP transport, stateless: the JSON-RPC
message to ``api/mcp_endpoint.py``, the caller's workspace (the authorizer's) to the tools."""

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.api import mcp_endpoint
from neural_memory.api.resolver import (
    ERROR_RESPONSES,
    build_resolver,
    current_caller,
    current_request_id,
    current_workspace_id,
)
from neural_memory.models import ErrorResponse
from neural_memory.observability import logger, metrics, tracer
from neural_memory.runtime import get_service

if TYPE_CHECKING:
    from neural_memory.agent_tools.calling import Memory

# The store is built on the first tool call, not for the handshake or the listing.
app = build_resolver(needs_service=False)
_JSON_RPC: dict[int, OpenAPIResponse] = {
    200: {
        "description": "The JSON-RPC reply: a result, or an error (an unknown method, bad params)",
        "content": {"application/json": {"model": mcp_endpoint.JsonRpcReply}},
    },
    202: {"description": "A notification or response, accepted (no body)"},
    **ERROR_RESPONSES,
    400: {
        "description": "Not a JSON-RPC message (a JSON-RPC error: -32700 not JSON, -32600 a batch or no request), "
        "or a body refused before it is read (the error envelope: nesting too deep, a lone surrogate)",
        "content": {"application/json": {"model": mcp_endpoint.JsonRpcReply | ErrorResponse}},
    },
    406: {
        "description": "The Accept header refuses application/json (a JSON-RPC error)",
        "content": {"application/json": {"model": mcp_endpoint.JsonRpcReply}},
    },
}


def _reply(reply: mcp_endpoint.HttpReply) -> Response[str]:
    return Response(status_code=reply.status, body=reply.body, headers=reply.headers)


def _memory() -> "Memory":
    return mcp_endpoint.memory_of(
        get_service(), current_workspace_id(app), current_request_id(app), current_caller(app)
    )


@app.post(
    "/mcp",
    summary="MCP (streamable HTTP, stateless)",
    description="One JSON-RPC message of the Model Context Protocol (initialize, ping, tools/list, tools/call; "
    "notifications are accepted) and its reply as application/json. The tools are neural-memory mcp's, on the "
    "key's workspace, as the key's role allows (a refused call is a tool error naming the role needed). "
    "A body that is no JSON-RPC message is a 400 with a JSON-RPC error.",
    responses=_JSON_RPC,
    tags=["mcp"],
)
@tracer.capture_method(capture_response=False)  # tool calls carry observation content
def post() -> Response[str]:
    """One JSON-RPC message from an MCP client."""
    event = app.current_event
    return _reply(mcp_endpoint.serve_post(event.decoded_body or "", event.headers, _memory))


@app.route(
    "/mcp",
    method=["GET", "DELETE"],
    summary="MCP's session stream and end (none: 405)",
    responses={
        405: {
            "description": "No sessions: POST each message (a JSON-RPC error; Allow: POST)",
            "content": {"application/json": {"model": mcp_endpoint.JsonRpcReply}},
        },
        **ERROR_RESPONSES,
    },
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
