"""A small threaded HTTP server in front of ``LocalGateway`` (loopback by default)."""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from neural_memory.errors import PayloadTooLarge
from neural_memory.http import error_reply

if TYPE_CHECKING:
    from neural_memory.local.gateway import LocalGateway


class LocalApiServer(ThreadingHTTPServer):
    """Serves the gateway; ``daemon_threads`` so Ctrl-C never waits on a slow client."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], gateway: LocalGateway, max_body_bytes: int, quiet: bool) -> None:
        super().__init__(address, _RequestHandler)
        self.gateway = gateway
        self.max_body_bytes = max_body_bytes
        self.quiet = quiet

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class _RequestHandler(BaseHTTPRequestHandler):
    server: LocalApiServer
    protocol_version = "HTTP/1.1"

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > self.server.max_body_bytes:
            # Drain a moderately oversize body so the client reads the 413 instead of a broken pipe;
            # beyond 16x the limit, stop reading and close.
            remaining = length if length <= 16 * self.server.max_body_bytes else 0
            while remaining > 0:
                remaining -= len(self.rfile.read(min(remaining, 1 << 16)) or b"\0" * remaining)
            status, headers, envelope = error_reply(PayloadTooLarge(self.server.max_body_bytes), "local")
            self._reply(status, envelope, headers, close=True)
            return
        body = self.rfile.read(length) if length else b""
        headers = dict(self.headers.items())
        reply = self.server.gateway.dispatch(self.command, self.path, headers, body, self.client_address[0])
        self._reply(reply.status, reply.body, reply.headers)

    def _reply(self, status: int, body: str, headers: dict[str, str], close: bool = False) -> None:
        payload = body.encode()
        self.send_response(status)
        headers = {"Content-Type": "application/json", **headers}
        for name, value in headers.items():
            if name.lower() not in {"content-length", "connection"}:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = _serve

    def log_message(self, format: str, *args: object) -> None:  # BaseHTTPRequestHandler's signature
        if not self.server.quiet:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")
