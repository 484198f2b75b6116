"""A real HTTP server on loopback speaking the model hub's download protocol as ``models pull``
reads it: ``GET /{repo}/resolve/{revision}/{path}`` answers 302 to a content address (as Hugging
Face sends large files to its CDN), which serves the bytes with ``Content-Length`` and honours
``Range: bytes=N-`` (206, ``Content-Range``); anything else is 404.

Faults are scripted per file path: ``cut[path] = (after, times)`` closes the connection after
``after`` bytes of the body on the next ``times`` requests; ``tamper[path] = bytes`` serves other
bytes than the pinned ones. Every request is recorded with its ``Range`` header.
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<revision>[0-9a-f]{40})/(?P<path>.+)$")
CONTENT = re.compile(r"^/cdn/(?P<repo>[^/]+/[^/]+)/(?P<revision>[0-9a-f]{40})/(?P<path>.+)$")


@dataclass
class Hub:
    """What the stand-in serves and how it misbehaves; ``requests`` is (path, Range header)."""

    files: dict[str, dict[str, bytes]]
    revision: str
    url: str = ""
    cut: dict[str, tuple[int, int]] = field(default_factory=dict)
    tamper: dict[str, bytes] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)

    def body(self, repo: str, revision: str, path: str) -> bytes | None:
        if revision != self.revision or path not in self.files.get(repo, {}):
            return None
        return self.tamper.get(path, self.files[repo][path])


def _handler(hub: Hub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            hub.requests.append((self.path, self.headers.get("Range")))
            if resolved := RESOLVE.match(self.path):
                if hub.body(**resolved.groupdict()) is None:
                    return self._send(404, b"Entry not found")
                self.send_response(302)
                self.send_header("Location", "/cdn/{repo}/{revision}/{path}".format(**resolved.groupdict()))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            content = CONTENT.match(self.path)
            body = hub.body(**content.groupdict()) if content else None
            if content is None or body is None:
                return self._send(404, b"Entry not found")
            path = content["path"]
            start = 0
            if (asked := self.headers.get("Range")) and (m := re.fullmatch(r"bytes=(\d+)-", asked)):
                start = int(m[1])
            self.send_response(206 if start else 200)
            self.send_header("Content-Length", str(len(body) - start))
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            after, times = hub.cut.get(path, (0, 0))
            if times > 0:
                hub.cut[path] = (after, times - 1)
                self.wfile.write(body[start : start + after])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)  # the connection drops mid-body
                return None
            self.wfile.write(body[start:])
            return None

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextmanager
def running_hub(files: dict[str, dict[str, bytes]], revision: str) -> Iterator[Hub]:
    """The stand-in on an ephemeral loopback port until the block ends."""
    hub = Hub(files, revision)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
