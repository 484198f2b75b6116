"""``neural-memory mcp --http`` bounded as ``serve`` is (``local/serving/connection_guard.py``).

The SDK serves streamable HTTP with uvicorn, whose event loop holds thousands of idle connections
cheaply: 300 clients trickling their headers a byte at a time did not delay anyone (issue 48). But
nothing ever closed them, and each holds a file descriptor: at the process's open-file limit the
server could accept no one, and died. Here the uvicorn server is the SDK's, with:

- the open-file limit raised to fit ``MAX_CONNECTIONS`` and as many accepted at once
  (``raise_open_file_limit``; the listen backlog, which bounds such a burst, is the limit);
- a deadline per request, counted from its first byte (from the connection's opening for its
  first request): its line and headers within ``head_timeout_s``, its body within
  ``request_timeout_s``; past it the connection is closed. A request wholly received is the
  application's, for as long as it answers (a tool call, an event stream), and never timed;
- at ``MAX_CONNECTIONS``, a new connection closes the one whose unfinished request began longest
  ago;
- drops counted and logged (at most a line per ``LOG_EVERY_S``).

The framing is read here only to know where each request ends (``Content-Length``, or a chunked
body's last chunk); uvicorn parses every request itself, as before.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from neural_memory.local.serving.connection_guard import (
    HEAD_TIMEOUT_S,
    MAX_CONNECTIONS,
    REQUEST_TIMEOUT_S,
    GuardStats,
    raise_open_file_limit,
)

if TYPE_CHECKING:
    from mcp.server import Server

_HEAD_END = b"\r\n\r\n"
_LAST_CHUNK = b"0\r\n\r\n"


class RequestFraming:
    """Where a connection's requests begin and end, from the bytes the client sends: ``receiving``
    while a request is arriving (``began`` its first byte, ``head_done`` once its headers are in),
    not while the application answers one or the connection is idle."""

    def __init__(self, opened: float) -> None:
        self.receiving = True  # the first request is due from the opening
        self.began = opened
        self.head_done = False
        self._head = b""
        self._body_left = 0
        self._chunked = False
        self._tail = b""

    def feed(self, data: bytes, now: float) -> None:
        while data:
            if not self.receiving:  # a new request's first byte
                self.receiving, self.began, self.head_done, self._head = True, now, False, b""
            data = self._feed_body(data) if self.head_done else self._feed_head(data)

    def _feed_head(self, data: bytes) -> bytes:
        self._head += data
        end = self._head.find(_HEAD_END)
        if end < 0:
            self._head = self._head[-64 * 1024 :]  # uvicorn refuses a longer head itself
            return b""
        head, rest = self._head[:end], self._head[end + len(_HEAD_END) :]
        self.head_done, self._head, self._tail = True, b"", b""
        fields = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            fields[name.strip().lower()] = value.strip().lower()
        self._chunked = b"chunked" in fields.get(b"transfer-encoding", b"")
        try:
            self._body_left = 0 if self._chunked else int(fields.get(b"content-length", b"0") or 0)
        except ValueError:
            self._body_left = 0  # uvicorn answers 400 and closes
        if not self._chunked and self._body_left == 0:
            self.receiving = False
        return rest

    def _feed_body(self, data: bytes) -> bytes:
        if self._chunked:
            self._tail = (self._tail + data)[-len(_LAST_CHUNK) - 2 :]
            if self._tail.endswith(_LAST_CHUNK):  # the last chunk, no trailers
                self.receiving = False
            return b""
        taken = min(len(data), self._body_left)
        self._body_left -= taken
        if self._body_left == 0:
            self.receiving = False
        return data[taken:]


class ConnectionGuard:
    """The deadlines, the limit and the counts for one server's connections."""

    def __init__(self, head_timeout_s: float, request_timeout_s: float, max_connections: int) -> None:
        self.head_timeout_s = head_timeout_s
        self.request_timeout_s = request_timeout_s
        self.max_connections = max_connections
        self.stats = GuardStats()
        self.open: dict[int, tuple[RequestFraming, asyncio.BaseTransport]] = {}
        self._sweeping = False

    def opened(self, key: int, transport: asyncio.BaseTransport) -> None:
        if len(self.open) >= self.max_connections:
            receiving = [(f.began, k) for k, (f, _) in self.open.items() if f.receiving]
            if receiving:
                self._drop(min(receiving)[1], "atLimit")
        self.open[key] = (RequestFraming(time.monotonic()), transport)
        if not self._sweeping:
            self._sweeping = True
            asyncio.get_running_loop().call_later(1.0, self._sweep)

    def received(self, key: int, data: bytes) -> None:
        if (entry := self.open.get(key)) is not None:
            entry[0].feed(data, time.monotonic())

    def closed(self, key: int) -> None:
        self.open.pop(key, None)

    def _sweep(self) -> None:
        now = time.monotonic()
        for key, (framing, _) in list(self.open.items()):
            if not framing.receiving:
                continue
            limit = self.request_timeout_s if framing.head_done else self.head_timeout_s
            if now - framing.began > limit:
                self._drop(key, "requestTimeout" if framing.head_done else "headTimeout")
        self.stats.log_due(now)
        asyncio.get_running_loop().call_later(1.0, self._sweep)

    def _drop(self, key: int, reason: str) -> None:
        _, transport = self.open.pop(key)
        self.stats.count(reason)
        transport.close()


def guarded_protocol(base: type[asyncio.Protocol], guard: ConnectionGuard) -> type[asyncio.Protocol]:
    """``base`` (uvicorn's HTTP protocol) telling ``guard`` of each connection and its bytes."""

    class Guarded(base):  # type: ignore[valid-type,misc]  # a class made at run time
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            guard.opened(id(self), transport)
            super().connection_made(transport)

        def data_received(self, data: bytes) -> None:
            guard.received(id(self), data)
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            guard.closed(id(self))
            super().connection_lost(exc)

    return Guarded


async def serve_http(
    server: Server[Any],
    host: str,
    port: int,
    *,
    head_timeout_s: float = HEAD_TIMEOUT_S,
    request_timeout_s: float = REQUEST_TIMEOUT_S,
    max_connections: int = MAX_CONNECTIONS,
) -> None:
    """The SDK's streamable HTTP app for ``server`` on uvicorn (as ``run_streamable_http_async``
    builds it), with uvicorn's HTTP protocol guarded (the module's docstring)."""
    import contextlib

    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol

    with contextlib.suppress(ImportError):
        # The SDK logs through rich, which imports this on the first exception it logs: at the
        # open-file limit (asyncio logs the accept() that failed, then retries) that import would
        # fail too, inside the logging call, and end the server.
        import rich.traceback  # noqa: F401
    connections = raise_open_file_limit(max_connections)
    guard = ConnectionGuard(head_timeout_s, request_timeout_s, connections)
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=guarded_protocol(H11Protocol, guard),
        backlog=connections,  # the most accepted at once, before the guard can make room
    )
    await uvicorn.Server(config).serve()


def guard_settings(settings: Any) -> dict[str, Any]:
    """The guard's limits from the settings ``serve`` reads (``NM_SERVE_*``)."""
    return {
        "head_timeout_s": settings.serve_head_timeout_s,
        "request_timeout_s": settings.serve_request_timeout_s,
        "max_connections": settings.serve_max_connections,
    }
