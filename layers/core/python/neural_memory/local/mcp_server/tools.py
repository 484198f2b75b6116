"""The MCP SDK's server over the tools of ``agent_tools`` (their one definition, shared with the
local server's and the Lambda function's ``/mcp``): a thin adapter listing them and handing each
call to ``agent_tools.calling``, for the SDK's transports (stdio, and ``neural-memory mcp --http``).

The API's reply model as structured content is off by default (``agent_tools/calling.py`` says
why); ``structured_content=True`` (``neural-memory mcp --structured-content``) adds it, with each
tool's output schema, for applications that read the JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError

from neural_memory import __version__
from neural_memory.agent_tools.calling import UnknownTool, call_async
from neural_memory.agent_tools.definitions import INSTRUCTIONS, SERVER_NAME, TOOLS
from neural_memory.clock import utcnow

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from mcp.server.context import ServerRequestContext

    from neural_memory.agent_tools.provenance import Provenance
    from neural_memory.local.mcp_server.backends import MemoryBackend

__all__ = ["INSTRUCTIONS", "build_server"]


def build_server(
    backend: MemoryBackend,
    clock: Callable[[], datetime] = utcnow,
    *,
    structured_content: bool = False,
    provenance: Provenance | None = None,
) -> Server[Any]:
    """An MCP server whose tools call ``backend``; with ``structured_content``, each reply also carries
    the API's reply model (and each tool its output schema), for applications that read it."""
    listing = types.ListToolsResult(
        tools=[types.Tool.model_validate(tool.listing(structured=structured_content)) for tool in TOOLS]
    )

    async def list_tools(
        context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        context: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            reply = await call_async(
                backend, params.name, params.arguments, clock(), structured=structured_content, provenance=provenance
            )
        except UnknownTool as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        return types.CallToolResult.model_validate(reply.result())

    return Server(
        SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool
    )
