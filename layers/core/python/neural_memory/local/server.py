"""A small threaded HTTP server in front of ``LocalGateway`` (loopback by default).

HTTP/1.1 framing is strict, because a lenient reader is how requests get smuggled: a body is read
by its ``Content-Length`` or its chunked encoding, never both; a length that is not a
non-negative number is refused; every read has a time limit; and every reply, including the
errors raised while parsing the request line and headers (414, 431, 400), is the JSON envelope.
"""

from __future__ import annotations

import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from neural_memory.errors import NeuralMemoryError, PayloadTooLarge
from neural_memory.http import error_body, error_reply

if TYPE_CHECKING:
    from neural_memory.local.gateway import LocalGateway

IDLE_TIMEOUT_S = 30.0
_PARSE_ERRORS = {
    400: "bad_request",
    408: "request_timeout",
    411: "length_required",
    414: "uri_too_long",
    431: "headers_too_large",
    501: "not_implemented",
    505: "http_version_not_supported",
}


class BadFraming(NeuralMemoryError):
    """The request's body framing cannot be trusted; the connection is closed after the reply."""

    code = "bad_request"
    status = HTTPStatus.BAD_REQUEST


class LocalApiServer(ThreadingHTTPServer):
    """Serves the gateway; ``daemon_threads`` so Ctrl-C never waits on a slow client."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        gateway: LocalGateway,
        max_body_bytes: int,
        quiet: bool,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
    ) -> None:
        super().__init__(address, _RequestHandler)
        self.gateway = gateway
        self.max_body_bytes = max_body_bytes
        self.quiet = quiet
        self.idle_timeout_s = idle_timeout_s

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class _RequestHandler(BaseHTTPRequestHandler):
    server: LocalApiServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.idle_timeout_s)  # a stalled client holds a thread this long at most

    def _serve(self) -> None:
        try:
            body = self._body()
        except (BadFraming, PayloadTooLarge) as exc:
            status, headers, envelope = error_reply(exc, "local")
            self._reply(status, envelope, headers, close=True)
            return
        except TimeoutError:
            self.close_connection = True
            return
        headers = dict(self.headers.items())
        method = "GET" if self.command == "HEAD" else self.command
        reply = self.server.gateway.dispatch(method, self.path, headers, body, self.client_address[0])
        self._reply(reply.status, reply.body, reply.headers)

    def _body(self) -> bytes:
        """The request body, by its Content-Length or its chunked encoding, within the size limit."""
        limit = self.server.max_body_bytes
        encodings = self.headers.get_all("Transfer-Encoding") or []
        lengths = self.headers.get_all("Content-Length") or []
        if encodings and lengths:
            raise BadFraming("a request may not carry both Transfer-Encoding and Content-Length")
        if encodings:
            if [e.strip().lower() for e in ",".join(encodings).split(",")] != ["chunked"]:
                raise BadFraming("only the chunked transfer coding is supported")
            return self._chunked(limit)
        if len(set(lengths)) > 1:
            raise BadFraming("conflicting Content-Length headers")
        text = lengths[0].strip() if lengths else "0"
        if not text.isdigit():
            raise BadFraming("Content-Length must be a non-negative integer")
        length = int(text)
        if length > limit:
            self._drain(length)
            raise PayloadTooLarge(limit)
        return self.rfile.read(length) if length else b""

    def _drain(self, length: int) -> None:
        """Read a moderately oversize body so the client reads the 413 instead of a broken pipe;
        beyond 16x the limit, stop reading (the connection is closed)."""
        remaining = length if length <= 16 * self.server.max_body_bytes else 0
        while remaining > 0:
            chunk = self.rfile.read(min(remaining, 1 << 16))
            if not chunk:
                break
            remaining -= len(chunk)

    def _chunked(self, limit: int) -> bytes:
        body = bytearray()
        while True:
            line = self.rfile.readline(1024)
            size_text = line.split(b";", 1)[0].strip()
            if not line.endswith(b"\n") or not size_text or any(c not in b"0123456789abcdefABCDEF" for c in size_text):
                raise BadFraming("malformed chunk size")
            size = int(size_text, 16)
            if size == 0:
                break
            if len(body) + size > limit:
                raise PayloadTooLarge(limit)
            body += self.rfile.read(size)
            if self.rfile.readline(3) not in (b"\r\n", b"\n"):
                raise BadFraming("malformed chunk")
        for _ in range(100):  # trailer fields, up to the blank line
            if self.rfile.readline(8192) in (b"\r\n", b"\n", b""):
                break
        return bytes(body)

    def _reply(self, status: int, body: str, headers: dict[str, str], close: bool = False) -> None:
        payload = b"" if self.command == "HEAD" else body.encode()
        self.send_response(status)
        headers = {"Content-Type": "application/json", **headers}
        for name, value in headers.items():
            if name.lower() not in {"content-length", "connection"}:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body.encode())))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(payload)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors found while parsing the request line and headers, in the envelope too."""
        self.close_connection = True
        envelope = error_body(_PARSE_ERRORS.get(code, "bad_request"), message or explain or "bad request", "local")
        command = getattr(self, "command", None)
        self.command = command or "GET"  # _reply omits the body only for HEAD
        self._reply(code, envelope, {}, close=True)

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_HEAD = do_OPTIONS = _serve

    def log_message(self, format: str, *args: object) -> None:  # BaseHTTPRequestHandler's signature
        if not self.server.quiet:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")
