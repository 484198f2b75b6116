"""A real HTTP server on loopback speaking the model hub's download protocol as ``models pull``
reads it: ``GET /{repo}/resolve/{revision}/{path}`` answers 302 to a content address (as Hugging
Face sends large files to its CDN), which serves the bytes with ``Content-Length`` and honours
``Range: bytes=N-`` (206, ``Content-Range``); anything else is 404.

Faults are scripted per file path: ``cut[path] = (after, times)`` closes the connection after
``after`` bytes of the body on the next ``times`` requests (``reset`` likewise, with a TCP reset
instead of a close); ``tamper[path] = bytes`` serves other bytes than the pinned ones; ``loop``
holds paths whose address redirects to itself; ``status[path]`` answers the content address with
that status (e.g. 503); ``trickle[path] = seconds`` sends the body one byte per that many seconds
(a read timeout never trips); ``stall[path] = seconds`` waits that long before answering at all;
``ranges = False`` makes it a server that does not resume (no ``Accept-Ranges``, ``Range``
ignored). Every request is recorded with its ``Range`` header.
"""

from __future__ import annotations

import re
import socket
import struct
import threading
import time
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
    reset: dict[str, tuple[int, int]] = field(default_factory=dict)
    loop: set[str] = field(default_factory=set)
    status: dict[str, int] = field(default_factory=dict)
    trickle: dict[str, float] = field(default_factory=dict)
    stall: dict[str, float] = field(default_factory=dict)
    ranges: bool = True
    requests: list[tuple[str, str | None]] = field(default_factory=list)

    def body(self, repo: str, revision: str, path: str) -> bytes | None:
        if revision != self.revision or path not in self.files.get(repo, {}):
            return None
        return self.tamper.get(path, self.files[repo][path])


class _HubHandler(BaseHTTPRequestHandler):
    """The stand-in's requests; ``hub`` is set by ``_handler``."""

    hub: Hub

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.hub.requests.append((self.path, self.headers.get("Range")))
        if resolved := RESOLVE.match(self.path):
            return self._redirect(resolved)
        content = CONTENT.match(self.path)
        body = self.hub.body(**content.groupdict()) if content else None
        if content is None or body is None:
            return self._send(404, b"Entry not found")
        path = content["path"]
        if path in self.hub.stall:
            time.sleep(self.hub.stall[path])
        if path in self.hub.status:
            return self._send(self.hub.status[path], b"Service Unavailable")
        start = 0
        asked = self.headers.get("Range") if self.hub.ranges else None
        if asked and (m := re.fullmatch(r"bytes=(\d+)-", asked)):
            start = int(m[1])
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(len(body) - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        if self.hub.ranges:
            self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if path in self.hub.trickle:
            return self._trickle(body[start:], self.hub.trickle[path])
        for faults, how in ((self.hub.reset, "reset"), (self.hub.cut, "cut")):
            after, times = faults.get(path, (0, 0))
            if times > 0:
                faults[path] = (after, times - 1)
                return self._drop(body[start : start + after], how)
        self.wfile.write(body[start:])
        return None

    def _redirect(self, resolved: re.Match[str]) -> None:
        if self.hub.body(**resolved.groupdict()) is None:
            return self._send(404, b"Entry not found")
        self.send_response(302)
        looping = resolved["path"] in self.hub.loop
        location = self.path if looping else "/cdn/{repo}/{revision}/{path}".format(**resolved.groupdict())
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()
        return None

    def _drop(self, sent: bytes, how: str) -> None:
        """Send ``sent`` of the body, then drop the connection mid-body: closed, or reset."""
        self.wfile.write(sent)
        self.wfile.flush()
        self.close_connection = True
        if how == "reset":  # SO_LINGER 0: close() sends a TCP reset (ECONNRESET), not a FIN
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        else:
            self.connection.shutdown(2)

    def _trickle(self, body: bytes, every_s: float) -> None:
        """The body a byte at a time, until it is sent or the client goes away."""
        self.close_connection = True
        for n in range(len(body)):
            try:
                self.wfile.write(body[n : n + 1])
                self.wfile.flush()
            except OSError:
                return
            time.sleep(every_s)

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _handler(hub: Hub) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_HubHandler,), {"hub": hub})


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
