"""The local HTTP server: waitress (a maintained, pure-Python WSGI server) in front of
``LocalGateway``, on loopback by default.

Why waitress: its HTTP/1.1 parser is strict and has a record of fixed request-smuggling reports
(chunked bodies, invalid or negative ``Content-Length``, unsupported transfer codings are all
refused); it reads the whole request, within the header and body limits, before a worker thread
sees it, so a client that stalls holds a socket, never a worker; and WSGI fits the synchronous
Lambda handlers the gateway calls. It needs no compiler and runs wherever Python does.

A client that stalls is bounded by ``connection_guard``: a deadline for each request's head and
for the whole request (waitress's idle timeout restarts with every byte), a connection limit well
above a team's, the slowest client closed first at that limit, each drop logged and counted.

What waitress answers itself (400, 413, 431, 500, 501) is rewritten into the API's JSON
envelope, as is everything the gateway answers (404, 405, 414, …); HEAD is answered as GET
without the body.
"""

from __future__ import annotations

import logging
import select
import sys
import time
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask

from neural_memory.api.resolver import error_body, error_reply
from neural_memory.api.routes import route_template
from neural_memory.errors import NeuralMemoryError, PayloadTooLarge
from neural_memory.local.serving.connection_guard import (
    HEAD_TIMEOUT_S,
    MAX_CONNECTIONS,
    REQUEST_TIMEOUT_S,
    GuardStats,
    began,
    note_received,
)
from neural_memory.local.serving.gateway import DEFAULT_CONCURRENCY
from neural_memory.observability import logger

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from neural_memory.local.serving.gateway import LocalGateway

IDLE_TIMEOUT_S = 30.0
MAX_HEADER_BYTES = 64 * 1024
MAX_TARGET_BYTES = 8 * 1024  # a request target beyond this is answered 414
# waitress's own refusals, named as the API names its errors.
_WAITRESS_CODES = {
    400: "bad_request",
    413: "payload_too_large",
    431: "headers_too_large",
    500: "internal_error",
    501: "not_implemented",
}


class UriTooLong(NeuralMemoryError):
    """The request target is longer than ``MAX_TARGET_BYTES``."""

    code = "uri_too_long"
    status = HTTPStatus.REQUEST_URI_TOO_LONG


class _EnvelopeErrorTask(ErrorTask):  # type: ignore[misc]  # waitress is untyped
    """waitress's error reply (a plain-text page) as the API's JSON envelope."""

    def execute(self) -> None:
        error = self.request.error
        body = error_body(_WAITRESS_CODES.get(error.code, "bad_request"), str(error.body), "local").encode()
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _StrictParser(HTTPRequestParser):  # type: ignore[misc]
    """waitress's parser, refusing a request framed both by Content-Length and by
    Transfer-Encoding (waitress would read the chunks; RFC 9112 calls the pair a smuggling
    attempt to be handled as an error, and the error reply closes the connection)."""

    def parse_header(self, header_plus: bytes) -> None:
        names = {line.split(b":", 1)[0].strip().lower() for line in header_plus.split(b"\r\n")[1:]}
        if b"content-length" in names and b"transfer-encoding" in names:
            raise ParsingError("a request may not carry both Transfer-Encoding and Content-Length")
        super().parse_header(header_plus)


class _EnvelopeChannel(HTTPChannel):  # type: ignore[misc]
    parser_class = _StrictParser
    error_task_class = _EnvelopeErrorTask
    request_began: float | None = None  # when the request being received began (connection_guard)

    def received(self, data: bytes) -> bool:
        pending, before = self.request, self.request_began
        received: bool = super().received(data)
        note_received(self, pending, before)
        return received


class GuardedServer(TcpWSGIServer):  # type: ignore[misc]  # waitress is untyped
    """waitress's TCP server with the deadlines, the limit and the eviction of ``connection_guard``."""

    next_channel_cleanup: float = 0.0  # waitress's: when its maintenance runs next

    def __init__(self, *args: Any, head_timeout_s: float, request_timeout_s: float, **kwargs: Any) -> None:
        self.head_timeout_s = head_timeout_s
        self.request_timeout_s = request_timeout_s
        self.stats = GuardStats()
        super().__init__(*args, **kwargs)

    def readable(self) -> bool:
        """waitress's, except at the limit: a connection waiting to be accepted takes the place of
        the slowest client (``_drop_slowest``) instead of waiting until someone leaves."""
        now = time.time()
        if now >= self.next_channel_cleanup:
            self.next_channel_cleanup = now + self.adj.cleanup_interval
            self.maintenance(now)
        if not self.accepting:
            return False
        closing = sum(1 for channel in self.active_channels.values() if channel.will_close)
        if len(self._map) - closing < self.adj.connection_limit:
            self.in_connection_overflow = False
            return True
        if self._someone_waits() and self._drop_slowest():
            return True
        if not self.in_connection_overflow:  # said once per episode
            self.in_connection_overflow = True
            logger.warning(
                "connection limit reached and every connection has a request being served: new ones wait",
                extra={"limit": self.adj.connection_limit},
            )
        return False

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # waitress's idle timeout
        clock = time.monotonic()
        for channel in self.active_channels.values():
            started = began(channel)
            if started is None or channel.requests or channel.will_close:
                continue  # receiving nothing, or a request of it is being served
            headers_done = bool(getattr(channel.request, "headers_finished", False))
            limit = self.request_timeout_s if headers_done else self.head_timeout_s
            if clock - started > limit:
                self._drop(channel, "requestTimeout" if headers_done else "headTimeout")
        self.stats.log_due(clock)

    def connections(self) -> dict[str, Any]:
        """What ``GET /health`` shows of the connections: open, the limit, and the drops by reason."""
        with self.stats.lock:
            dropped = dict(self.stats.dropped)
        return {"open": len(self.active_channels), "limit": self.adj.connection_limit, "dropped": dropped}

    def _someone_waits(self) -> bool:
        poller = select.poll()
        poller.register(self.socket.fileno(), select.POLLIN)
        return bool(poller.poll(0))

    def _drop_slowest(self) -> bool:
        """Close the client whose unfinished request began longest ago, else the one idle longest;
        False when every connection has a request being served (none is closed)."""
        idle = [c for c in self.active_channels.values() if not c.requests and not c.will_close]
        receiving = [c for c in idle if began(c) is not None]
        if receiving:
            self._drop(min(receiving, key=lambda c: began(c) or 0.0), "atLimit")
        elif idle:
            self._drop(min(idle, key=lambda c: c.last_activity), "atLimit")
        return bool(idle)

    def _drop(self, channel: HTTPChannel, reason: str) -> None:
        self.stats.count(reason)
        # Closed by the event loop once this pass over the sockets is done (as waitress's idle
        # timeout closes one): closing it now could free its descriptor for a new connection that
        # this pass's poll results still name under the old one.
        channel.will_close = True


class LocalApiServer:
    """Serves ``gateway`` on ``address`` with ``threads`` worker threads (the most requests
    handled at once; each function's handler pool in the gateway has as many instances), at most
    ``max_connections`` connections, each request's head within ``head_timeout_s`` of its first
    byte and the whole request within ``request_timeout_s`` (``connection_guard``)."""

    def __init__(
        self,
        address: tuple[str, int],
        gateway: LocalGateway,
        max_body_bytes: int,
        quiet: bool,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        threads: int = DEFAULT_CONCURRENCY,
        *,
        max_connections: int = MAX_CONNECTIONS,
        head_timeout_s: float = HEAD_TIMEOUT_S,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self.gateway = gateway
        self.max_body_bytes = max_body_bytes
        self.quiet = quiet
        logging.getLogger("waitress").setLevel(logging.ERROR if quiet else logging.WARNING)
        self._server = GuardedServer(
            self._application,
            map={},
            head_timeout_s=head_timeout_s,
            request_timeout_s=request_timeout_s,
            host=address[0],
            port=address[1],
            threads=threads,
            ident="neural-memory",
            max_request_header_size=MAX_HEADER_BYTES,
            # waitress reads a body up to 16x the limit, so a client sending a moderately
            # oversized one reads our 413 instead of a broken pipe; beyond that it refuses at once.
            max_request_body_size=16 * max_body_bytes,
            channel_timeout=idle_timeout_s,
            cleanup_interval=max(min(idle_timeout_s / 4, head_timeout_s / 4, 1.0), 0.1),
            connection_limit=max_connections,
            asyncore_use_poll=True,  # select() cannot watch descriptors past 1024
            expose_tracebacks=False,
        )
        self._server.channel_class = _EnvelopeChannel
        gateway.health_details = lambda: {"connections": self._server.connections()}

    @property
    def url(self) -> str:
        """Where it listens, e.g. ``http://127.0.0.1:8080``."""
        return f"http://{self._server.effective_host}:{self._server.effective_port}"

    def serve_forever(self) -> None:
        """Serve until ``shutdown()`` (or Ctrl-C)."""
        self._server.run()

    def shutdown(self) -> None:
        """Stop serving: the event loop closes every socket and returns from ``serve_forever``."""
        from waitress import wasyncore

        try:
            self._server.trigger.pull_trigger(lambda: wasyncore.close_all(self._server._map))
        except OSError:
            # The loop's wake-up pipe is already closed (seen once in a loaded test run: EBADF at
            # a fixture's teardown), so the loop cannot be asked: close every socket from here.
            wasyncore.close_all(self._server._map)

    def server_close(self) -> None:
        """Let the worker threads finish their requests and stop."""
        self._server.task_dispatcher.shutdown()

    def _application(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        began = time.perf_counter()
        method = environ["REQUEST_METHOD"]
        target = environ.get("REQUEST_URI") or environ.get("PATH_INFO") or "/"
        status, body, headers = self._answer(environ, method, target)
        payload = body.encode()
        response_headers = [(k, v) for k, v in headers.items() if k.lower() not in {"content-length", "connection"}]
        response_headers.append(("Content-Length", str(len(payload))))
        start_response(f"{status} {_reason(status)}", response_headers)
        if not self.quiet:
            took = (time.perf_counter() - began) * 1000
            # The route's template, never the target: a query string or a path's id may carry a secret.
            route = route_template(target)
            sys.stderr.write(f"{environ.get('REMOTE_ADDR', '-')} {method} {route} {status} {took:.0f} ms\n")
        return [] if method == "HEAD" else [payload]

    def _answer(self, environ: dict[str, Any], method: str, target: str) -> tuple[int, str, dict[str, str]]:
        try:
            if len(target) > MAX_TARGET_BYTES:
                raise UriTooLong(f"the request target is longer than {MAX_TARGET_BYTES} bytes")
            if int(environ.get("CONTENT_LENGTH") or 0) > self.max_body_bytes:  # chunked: the decoded length
                raise PayloadTooLarge(self.max_body_bytes)
        except NeuralMemoryError as exc:
            status, headers, envelope = error_reply(exc, "local")
            return status, envelope, headers
        body = environ["wsgi.input"].read()
        reply = self.gateway.dispatch(
            "GET" if method == "HEAD" else method,
            target,
            _headers(environ),
            body,
            environ.get("REMOTE_ADDR", "127.0.0.1"),
        )
        return reply.status, reply.body, reply.headers


def _headers(environ: dict[str, Any]) -> dict[str, str]:
    """The request's header fields, named as clients write them (``X-Api-Key``)."""
    headers = {
        key[5:].replace("_", "-").title(): str(value) for key, value in environ.items() if key.startswith("HTTP_")
    }
    for key, name in (("CONTENT_TYPE", "Content-Type"), ("CONTENT_LENGTH", "Content-Length")):
        if environ.get(key):
            headers[name] = str(environ[key])
    return headers


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"
