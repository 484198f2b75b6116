"""Clients that starve a server if it lets them (issue 48): each opens a connection, sends a request
line, then one byte of a header every ``every_s`` seconds, never ending its headers (the attack
known as slowloris). And a timed request of a well-behaved client beside them. Used by the tests
of the local server and the MCP server over HTTP, and by ``bench.noisy_tenants``."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from dataclasses import dataclass, field


@dataclass
class SlowClients:
    """``count`` slow connections to ``host:port`` (``start`` opens them, ``stop`` closes them);
    ``dropped`` is how many the server has closed so far."""

    host: str
    port: int
    count: int
    every_s: float = 2.0
    request_line: bytes = b"GET /health HTTP/1.1\r\nHost: x\r\n"
    sockets: list[socket.socket] = field(default_factory=list)
    closed_by_server: set[int] = field(default_factory=set)
    refused: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def dropped(self) -> int:
        return len(self.closed_by_server)

    def start(self) -> None:
        """Open every connection and send its request line (a connection the kernel queues for the
        server counts as open), then trickle in the background."""
        for _ in range(self.count):
            try:
                sock = socket.create_connection((self.host, self.port), timeout=5)
                sock.sendall(self.request_line)
            except OSError:
                self.refused += 1
                continue
            sock.setblocking(False)
            self.sockets.append(sock)
        self._thread = threading.Thread(target=self._trickle, daemon=True)
        self._thread.start()

    def _trickle(self) -> None:
        while not self._stop.wait(self.every_s):
            for n, sock in enumerate(self.sockets):
                if n in self.closed_by_server:
                    continue
                try:
                    if sock.recv(1024, socket.MSG_PEEK) == b"":  # the server closed it (or answered)
                        self.closed_by_server.add(n)
                        continue
                except BlockingIOError:
                    pass  # still open, nothing said
                except OSError:
                    self.closed_by_server.add(n)
                    continue
                try:
                    sock.send(b"a")  # one more byte of a header name that never ends
                except OSError:
                    self.closed_by_server.add(n)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.every_s + 5)
        for sock in self.sockets:
            sock.close()


def timed_get(host: str, port: int, path: str, headers: dict[str, str], timeout_s: float) -> tuple[int, float]:
    """A well-behaved client's request on a new connection: its status (0: no answer in
    ``timeout_s``, or refused) and how long it took."""
    began = time.monotonic()
    connection = http.client.HTTPConnection(host, port, timeout=timeout_s)
    try:
        connection.request("GET", path, headers=headers)
        reply = connection.getresponse()
        reply.read()
        return reply.status, time.monotonic() - began
    except OSError:
        return 0, time.monotonic() - began
    finally:
        connection.close()
