"""A tool call, whatever the transport: the arguments checked against the tool's model, the use
case run on the memory, and the reply as MCP's ``CallToolResult``: the compact text the model
reads (``summaries.py``), and the API's reply model as structured content only when asked
(``neural-memory mcp --structured-content``: a client that has structured content sends the model
that instead of the text; Claude Code does).

A call the memory refuses is a tool error whose text is the error envelope's code and message
(``not_found: observation 'x' not found``); arguments the tool's model refuses are worded as the
API words a refused body (``validation_error: topK: ...``), one line, never pydantic's dump; a
call that fails unexpectedly is a tool error too, its cause logged, never a protocol error or a
5xx. An unknown tool is ``UnknownTool``: a protocol error (JSON-RPC -32602), as MCP says.

``call`` runs on a synchronous memory (``workspace.WorkspaceMemory``: the Lambda function's
``/mcp``); ``call_async`` on an asynchronous one (``local/mcp_server/backends.py``: the SDK's transports)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ValidationError

from neural_memory.agent_tools.definitions import TOOLS_BY_NAME, Tool
from neural_memory.agent_tools.workspace import BackendFailure
from neural_memory.observability import logger

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from pydantic import BaseModel

    from neural_memory.agent_tools.provenance import Provenance


class Memory(Protocol):
    """A workspace's memory as the tools call it: ``operation`` (``operations.OPERATIONS``, by name)
    with ``request`` (its body as the API takes it, or the observation id a path names); the reply
    is the operation's reply model."""

    def run(self, operation: str, request: Any) -> BaseModel: ...


class AsyncMemory(Protocol):
    """``Memory``, awaited."""

    async def run(self, operation: str, request: Any) -> BaseModel: ...


class UnknownTool(Exception):
    """A call naming no tool of this server."""

    def __init__(self, name: object) -> None:
        super().__init__(f"Unknown tool: {name}")


@dataclass(frozen=True)
class ToolReply:
    """What a call gives the client: text, whether it is an error, and structured content if asked."""

    text: str
    is_error: bool = False
    structured: dict[str, Any] | None = None
    code: str | None = None  # an error's code (the envelope's), for logs and metrics

    def result(self) -> dict[str, Any]:
        """As MCP's ``CallToolResult`` on the wire."""
        result: dict[str, Any] = {"content": [{"type": "text", "text": self.text}], "isError": self.is_error}
        if self.structured is not None:
            result["structuredContent"] = self.structured
        return result


@dataclass(frozen=True)
class _Prepared:
    tool: Tool
    arguments: BaseModel
    request: Any


def _prepare(
    name: str, arguments: Mapping[str, Any] | None, now: datetime, provenance: Provenance | None = None
) -> _Prepared | ToolReply:
    """The tool, its validated arguments and the use case's input; a tool error for arguments its model refuses."""
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        raise UnknownTool(name)
    try:
        validated = tool.arguments.model_validate(dict(arguments or {}))
    except ValidationError as exc:
        from neural_memory.bad_input import validation_failure

        error, _ = validation_failure(exc.errors(), located=False)  # arguments: no location part
        logger.info("tool arguments refused", extra={"tool": name, "field": error.field})
        return ToolReply(f"{error.code}: {error}", is_error=True, code=error.code)
    request = tool.request(validated, now)
    if provenance is not None and tool.operation == "add":  # remember: the session's repository and person
        request = {"observations": provenance.apply(request["observations"])}
    return _Prepared(tool, validated, request)


def _finish(prepared: _Prepared, reply: BaseModel, structured: bool) -> ToolReply:
    content = reply.model_dump(mode="json", by_alias=True) if structured else None
    return ToolReply(prepared.tool.summary(prepared.arguments, reply), structured=content)


def _failed(name: str, exc: Exception) -> ToolReply:
    if isinstance(exc, BackendFailure):
        logger.info("tool call refused", extra={"tool": name, "code": exc.code})
        return ToolReply(str(exc), is_error=True, code=exc.code)  # the envelope's code and message: all the model needs
    logger.exception("tool call failed", extra={"tool": name})
    failed = f"internal_error: {name} failed unexpectedly; the server's log has why"
    return ToolReply(failed, is_error=True, code="internal_error")


def call(
    memory: Memory,
    name: str,
    arguments: Mapping[str, Any] | None,
    now: datetime,
    *,
    structured: bool = False,
    provenance: Provenance | None = None,
) -> ToolReply:
    """Run tool ``name`` with ``arguments`` on ``memory``; ``UnknownTool`` if there is no such tool."""
    prepared = _prepare(name, arguments, now, provenance)
    if isinstance(prepared, ToolReply):
        return prepared
    try:
        reply = memory.run(prepared.tool.operation, prepared.request)
    except Exception as exc:  # every failure is the model's to read, never the transport's
        return _failed(name, exc)
    return _finish(prepared, reply, structured)


async def call_async(
    memory: AsyncMemory,
    name: str,
    arguments: Mapping[str, Any] | None,
    now: datetime,
    *,
    structured: bool = False,
    provenance: Provenance | None = None,
) -> ToolReply:
    """``call`` on an asynchronous memory."""
    prepared = _prepare(name, arguments, now, provenance)
    if isinstance(prepared, ToolReply):
        return prepared
    try:
        reply = await memory.run(prepared.tool.operation, prepared.request)
    except Exception as exc:  # every failure is the model's to read, never the transport's
        return _failed(name, exc)
    return _finish(prepared, reply, structured)
