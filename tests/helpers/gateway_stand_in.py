"""A real HTTP server on loopback in front of the local API, standing in for what sits before a
deployed one (API Gateway, a load balancer): it answers the replies it is scripted with itself —
a 429 when throttled, a 503 with ``Retry-After`` while a backend restarts, a reply too slow for
the client's timeout — and forwards every other request to the API unchanged. The client under
test talks real HTTP to it; nothing in the client is replaced."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

FORWARDED_HEADERS = ("Authorization", "Content-Type", "Accept")


@dataclass(frozen=True)
class Scripted:
    """One reply the stand-in gives itself, in the API's error envelope unless ``body`` is given."""

    status: int
    code: str = "throttled"
    retry_after: str | None = None
    delay_s: float = 0.0
    body: bytes | None = None

    def payload(self) -> bytes:
        if self.body is not None:
            return self.body
        envelope = {"error": {"code": self.code, "message": f"scripted {self.status}", "details": []},
                    "requestId": f"gateway-{self.status}"}  # fmt: skip
        return json.dumps(envelope).encode()


@dataclass
class GatewayStandIn:
    """Forwards to ``upstream`` except for the next ``script`` entries; ``received`` lists each
    request it got (method, path, monotonic time)."""

    upstream: str
    script: deque[Scripted] = field(default_factory=deque)
    received: list[tuple[str, str, float]] = field(default_factory=list)
    url: str = ""

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else None
        self.received.append((handler.command, handler.path, time.monotonic()))
        if self.script:
            scripted = self.script.popleft()
            time.sleep(scripted.delay_s)
            headers = {"Content-Type": "application/json"}
            if scripted.retry_after is not None:
                headers["Retry-After"] = scripted.retry_after
            self._reply(handler, scripted.status, headers, scripted.payload())
            return
        forwarded = {name: handler.headers[name] for name in FORWARDED_HEADERS if handler.headers.get(name)}
        request = urllib.request.Request(self.upstream + handler.path, data=body, method=handler.command,
                                         headers=forwarded)  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # loopback only
                status, headers, payload = response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            status, headers, payload = error.code, dict(error.headers), error.read()
        kept = {name: value for name, value in headers.items() if name.lower() in {"content-type", "retry-after"}}
        self._reply(handler, status, kept, payload)

    @staticmethod
    def _reply(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], payload: bytes) -> None:
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)


def _handler_for(gateway: GatewayStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            gateway.answer(self)

        do_POST = do_DELETE = do_GET

        def log_message(self, format: str, *args: object) -> None:  # quiet
            return

    return Handler


@contextmanager
def running_gateway(upstream: str) -> Iterator[GatewayStandIn]:
    """A stand-in listening on loopback in front of ``upstream``, until the block ends."""
    gateway = GatewayStandIn(upstream)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(gateway))
    server.daemon_threads = True
    gateway.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield gateway
    finally:
        server.shutdown()
        server.server_close()
