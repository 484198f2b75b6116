"""``/mcp``: MCP's streamable HTTP transport, stateless, for the tools of ``agent_tools`` (the same
definitions and replies as ``neural-memory mcp`` over stdio), behind the API key like every route.

Stateless: each POST carries one JSON-RPC message, and a request's reply is the response's body, as
``application/json``. Nothing is kept between requests and no ``Mcp-Session-Id`` is issued, so any
Lambda instance (or any thread of the local server) answers any request, and a client sends no
session back. A GET (a stream for messages the server starts) or a DELETE (the end of a session)
has no session to act on: 405, as the transport allows. The key names the workspace; the
authorizer checked it before the request got here.

Served: ``initialize`` (protocol revisions 2024-11-05 to 2025-11-25, the handshake's),
``ping``, ``tools/list`` and ``tools/call``; notifications and responses are accepted (202) and
dropped (there is nothing to cancel or to wait for). Anything else is a JSON-RPC error: an
unknown method -32601, bad params -32602, and a body that is no JSON-RPC message -32700 (not
JSON) or -32600 (a batch array, no ``jsonrpc: "2.0"``, an id that is neither a string nor an
integer) with HTTP 400. A tool's failure is a tool error (``agent_tools/calling.py``), never a 5xx.

Not the SDK's transport: the ``mcp`` SDK, starlette and anyio are not in the Lambda layer (its size
budget, and every request's cold start), and a stateless server needs none of it. Newer clients
first probe ``server/discover`` under the 2026-07-28 revision: its refusal (a protocol version this
server does not speak: 400) sends them to the handshake."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel

from neural_memory import __version__, json_input
from neural_memory.agent_tools.calling import UnknownTool, call
from neural_memory.agent_tools.definitions import INSTRUCTIONS, SERVER_NAME, TOOLS
from neural_memory.agent_tools.provenance import Provenance, from_headers
from neural_memory.agent_tools.workspace import BackendFailure, WorkspaceMemory
from neural_memory.api.resolver import header
from neural_memory.clock import utcnow
from neural_memory.errors import NeuralMemoryError
from neural_memory.observability import (
    METRIC_MCP_TOOL_CALLS,
    METRIC_MCP_TOOL_ERRORS,
    logger,
    record_count,
    record_reason,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from datetime import datetime

    from neural_memory.agent_tools.calling import Memory
    from neural_memory.auth.roles import Caller
    from neural_memory.service import Service

# The handshake's revisions, oldest first (the SDK's HANDSHAKE_PROTOCOL_VERSIONS; a test compares).
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version"
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
JSON = "application/json"
ALLOWED = "POST"

RequestId = str | int


class JsonRpcError(BaseModel):
    """A JSON-RPC error object (for the OpenAPI document: replies are built as plain JSON)."""

    code: int
    message: str


class JsonRpcReply(BaseModel):
    """A JSON-RPC reply: ``result`` (MCP's result of the method) or ``error``."""

    jsonrpc: Literal["2.0"]
    id: str | int | None
    result: dict[str, Any] | None = None
    error: JsonRpcError | None = None


@dataclass(frozen=True)
class HttpReply:
    """Status, headers and body (empty for a 202)."""

    status: int
    body: str = ""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": JSON})


class _Refused(Exception):
    """A JSON-RPC error for the message: its code and message, the request id if one could be
    read, and the HTTP status (400 for a message that is not a valid request, else 200)."""

    def __init__(self, code: int, message: str, request_id: RequestId | None = None, status: int = 200) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id
        self.status = status


def _reply(request_id: RequestId | None, result: Any = None, error: _Refused | None = None) -> HttpReply:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    if error is not None:
        message["error"] = {"code": error.code, "message": error.message}
        return HttpReply(error.status, json.dumps(message))
    message["result"] = result
    return HttpReply(200, json.dumps(message))


def not_allowed(method: str) -> HttpReply:
    """GET or DELETE: no session, so no stream to open and none to end."""
    error = _Refused(
        INVALID_REQUEST,
        f"{method} is not allowed: this MCP server is stateless (no sessions, no server-initiated stream); "
        "POST each JSON-RPC message",
        status=405,
    )
    reply = _reply(None, error=error)
    return HttpReply(405, reply.body, {"Content-Type": JSON, "Allow": ALLOWED})


def _accepts_json(accept: str | None) -> bool:
    if not accept:
        return True
    kinds = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    return bool(kinds & {JSON, "application/*", "*/*"})


def _request_id(document: Any) -> RequestId | None:
    found = document.get("id") if isinstance(document, dict) else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


def memory_of(service: Service, workspace_id: str, request_id: str, caller: Caller) -> Memory:
    """The caller's workspace as the tools' memory (``agent_tools.workspace``)."""
    return WorkspaceMemory(service, workspace_id, request_id, caller)


def serve_post(
    body: str, headers: Mapping[str, str], memory: Callable[[], Memory], now: datetime | None = None
) -> HttpReply:
    """The reply to one POSTed JSON-RPC message; ``memory`` gives the caller's workspace (built
    only for a tool call: the handshake and the listing need no store); ``now``: a memory's
    default time (the clock's, unless given)."""
    now = now or utcnow()
    request_id: RequestId | None = None
    try:
        if not _accepts_json(header(headers, "Accept")):
            raise _Refused(INVALID_REQUEST, "Not Acceptable: the reply is application/json", status=406)
        try:
            document = json_input.parse(body)
        except json_input.JsonRefused as exc:
            raise _Refused(PARSE_ERROR, f"Parse error: {exc}", status=400) from None
        request_id = _request_id(document)
        method, params, is_request = _message(document)
        if not is_request:  # a notification, or a response to a request this server never sends
            logger.info("mcp message accepted", extra={"mcp_method": method or "response"})
            return HttpReply(202, "", {})
        assert method is not None and request_id is not None
        version = header(headers, PROTOCOL_VERSION_HEADER)
        if method != "initialize" and version is not None and version not in PROTOCOL_VERSIONS:
            raise _Refused(
                INVALID_REQUEST,
                f"Bad Request: unsupported {PROTOCOL_VERSION_HEADER} {version!r} (this server speaks "
                f"{', '.join(PROTOCOL_VERSIONS)})",
                request_id,
                status=400,
            )
        result = _dispatch(method, params, request_id, memory, now, from_headers(headers))
    except _Refused as refused:
        if refused.request_id is None:
            refused.request_id = request_id
        logger.info("mcp message refused", extra={"mcp_code": refused.code, "mcp_status": refused.status})
        return _reply(refused.request_id, error=refused)
    return _reply(request_id, result)


def _message(document: Any) -> tuple[str | None, dict[str, Any], bool]:
    """The method, params and whether it is a request (it then has an id) of a JSON-RPC message;
    ``_Refused`` when it is none."""
    if isinstance(document, list):
        raise _Refused(INVALID_REQUEST, "Invalid Request: batch arrays are not supported; POST one message", status=400)
    if not isinstance(document, dict) or document.get("jsonrpc") != "2.0":
        raise _Refused(INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message ("jsonrpc": "2.0")', status=400)
    has_id = "id" in document
    if "method" not in document:
        if has_id and ("result" in document or "error" in document):
            return None, {}, False
        raise _Refused(INVALID_REQUEST, "Invalid Request: no method", _request_id(document), status=400)
    method = document["method"]
    if not isinstance(method, str):
        raise _Refused(INVALID_REQUEST, "Invalid Request: method must be a string", _request_id(document), status=400)
    if has_id and _request_id(document) is None:
        raise _Refused(INVALID_REQUEST, "Invalid Request: id must be a string or an integer", status=400)
    params = document.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise _Refused(INVALID_PARAMS, "Invalid params: params must be an object", _request_id(document))
    return method, params, has_id


def _dispatch(
    method: str,
    params: dict[str, Any],
    request_id: RequestId,
    memory: Callable[[], Memory],
    now: datetime,
    provenance: Provenance,
) -> Any:
    if method == "initialize":
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise _Refused(INVALID_PARAMS, "Invalid params: protocolVersion (a string) is required", request_id)
        return {
            # the version asked for when this server speaks it, else its newest (the client decides)
            "protocolVersion": asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": SERVER_NAME, "version": __version__},
            "instructions": INSTRUCTIONS,
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [tool.listing(structured=False) for tool in TOOLS]}
    if method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            raise _Refused(
                INVALID_PARAMS, "Invalid params: name (a string) and arguments (an object) are expected", request_id
            )
        try:
            reply = call(cast("Memory", _Deferred(memory)), name, arguments, now, provenance=provenance)
        except UnknownTool as exc:
            raise _Refused(INVALID_PARAMS, str(exc), request_id) from None
        logger.info("mcp tool called", extra={"tool": name, "code": reply.code})
        record_count(METRIC_MCP_TOOL_CALLS, 1)
        if reply.code is not None:
            record_reason(METRIC_MCP_TOOL_ERRORS, reply.code)
        return reply.result()
    raise _Refused(METHOD_NOT_FOUND, f"Method not found: {method}", request_id)


class _Deferred:
    """The caller's memory, built at its first use, inside the tool call: a store that cannot be
    built (a configuration error) is then the call's tool error, as any failure of the call is."""

    def __init__(self, build: Callable[[], Memory]) -> None:
        self._build = build

    def __getattr__(self, name: str) -> Any:
        try:
            built = self._build()
        except NeuralMemoryError as exc:
            raise BackendFailure(exc.code, str(exc)) from exc
        return getattr(built, name)
