"""MCP over stdio, where every line gets an answer.

The SDK's stdio transport hands a line it cannot read (not UTF-8, not JSON, a lone surrogate, deep
nesting, not a JSON-RPC message) to the server as an exception, which the server only logs: the
agent's call then waits forever. Here each line is checked first (``json_input.parse``, then the
SDK's own JSON-RPC model); one that fails is answered at once with a JSON-RPC error — ``-32700``
(parse error) or ``-32600`` (invalid request) — carrying the request's id whenever it can be read,
so the waiting call ends, and the line never reaches the server.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types
from pydantic import ValidationError

from neural_memory import json_input

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from mcp.server import Server
    from mcp.shared._stream_protocols import WriteStream
    from mcp.shared.message import SessionMessage

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def refusal(line: bytes) -> tuple[int, str, str | int | None] | None:
    """Why ``line`` cannot be served (the JSON-RPC error code and message) and the request id it
    names, if any; None when it is a JSON-RPC message the server can read."""
    try:
        document = json_input.parse(line)
    except json_input.JsonRefused as exc:
        return PARSE_ERROR, f"parse error: {exc}", _id_of_garbled(line)
    try:
        # the very validation the SDK's reader runs next (it refuses NaN, which ``json`` reads)
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return INVALID_REQUEST, f"invalid request: {where}: {first['msg']}", _id_of(document)
    return None


def _id_of(document: Any) -> str | int | None:
    """The request id a document names (JSON-RPC: a string or an integer), or None."""
    found = document.get("id") if isinstance(document, dict) else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


def _id_of_garbled(line: bytes) -> str | int | None:
    """The id of a line refused as sent (nested too deep, a lone surrogate, bytes that are not
    UTF-8, a huge integer), when plain ``json`` still reads it, at worst with those bytes replaced."""
    for text in (line, line.decode("utf-8", errors="replace")):
        try:
            return _id_of(json.loads(text, parse_int=_any_integer))
        except (ValueError, RecursionError):
            continue
    return None


def _any_integer(digits: str) -> int:
    return int(digits) if len(digits) <= json_input.MAX_INTEGER_DIGITS else 0  # only the id is read


class _CheckedLines:
    """The lines of stdin the server can read, as text; the others are answered on ``replies``
    (set once the transport is up) and skipped."""

    def __init__(self, source: Any) -> None:
        self._source = source  # an anyio file over stdin's bytes
        self.replies: WriteStream[SessionMessage] | None = None
        self.ready = anyio.Event()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        from mcp.shared.message import SessionMessage

        async for line in self._source:
            if not line.strip():
                continue
            problem = refusal(line)
            if problem is None:
                yield line.decode("utf-8")
                continue
            code, message, request_id = problem
            await self.ready.wait()
            assert self.replies is not None
            error = mcp_types.JSONRPCError(
                jsonrpc="2.0", id=request_id, error=mcp_types.ErrorData(code=code, message=message)
            )
            await self.replies.send(SessionMessage(error))


async def run_stdio(server: Server[Any]) -> None:
    """The SDK's stdio transport for ``server``, with every line checked first (the module's docstring)."""
    from mcp.server.stdio import stdio_server

    lines = _CheckedLines(anyio.wrap_file(sys.stdin.buffer))
    # The SDK reads only ``async for line in stdin`` from the stream it is given.
    async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (read_stream, write_stream):
        lines.replies = write_stream
        lines.ready.set()
        await server.run(read_stream, write_stream, server.create_initialization_options())
