"""The memory's HTTP API as a hook calls it, with the standard library only: the typed client in
``neural_memory.local.client`` needs httpx and pydantic, and a hook starts on every prompt, so what it
imports is what every prompt pays. A plain ``http://`` API (``make serve``, the embedded store's
background server) is spoken to over a socket: one request per connection, HTTP/1.1 with
``Connection: close`` (``http.client`` would load ``email`` and ``ssl`` first); ``https://`` (a
deployed stack) through ``http.client``. Every failure is one exception, ``MemoryUnavailable``,
whose reason the hook logs; nothing here ever raises anything else."""

from __future__ import annotations

import json
import socket
import time
from typing import TYPE_CHECKING, Any

from neural_memory.operations import BY_NAME

if TYPE_CHECKING:
    from collections.abc import Mapping


class HttpError(Exception):
    """A reply that is not HTTP."""


class MemoryUnavailable(Exception):
    """The memory did not answer usefully: unreachable, too slow, an error status, not JSON."""

    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status  # the HTTP status, when the memory answered with an error


class MemoryApi:
    """One workspace of a running API (``url``, ``key``); each call ends by ``deadline``
    (``time.monotonic()``), whatever the server does."""

    def __init__(self, url: str, key: str, deadline: float) -> None:
        self.url = url.rstrip("/")
        self.key = key
        self.deadline = deadline

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """The decoded JSON reply of one request, or ``MemoryUnavailable``."""
        left = self.deadline - time.monotonic()
        if left <= 0.01:
            raise MemoryUnavailable(f"no time left for {method} {path}")
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.key}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        try:
            status, raw = request(self.url, method, path, data, headers, left)
        except TimeoutError:
            raise MemoryUnavailable(f"{method} {path}: no reply within {left:.2f} s") from None
        except (OSError, HttpError, ValueError) as error:
            raise MemoryUnavailable(f"{method} {path}: unreachable ({error or type(error).__name__})") from None
        if not 200 <= status < 300:
            raise MemoryUnavailable(f"{method} {path}: HTTP {status} {_error_code(raw)}".rstrip(), status)
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            raise MemoryUnavailable(f"{method} {path}: the reply is not JSON") from None

    def run(self, operation: str, request: Any = None) -> dict[str, Any]:
        """An API operation (``neural_memory/operations.py``, by name): ``request`` is its body, or
        the observation id its path names."""
        chosen = BY_NAME[operation]
        if isinstance(request, str):
            return _object(self.call(chosen.method, "/" + chosen.target(id=request)))
        return _object(self.call(chosen.method, "/" + chosen.target(), request))

    def search(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.run("search", body)

    def experts(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.run("experts", body)

    def lineage(self, observation_id: str) -> dict[str, Any]:
        return self.run("lineage", observation_id)

    def get(self, observation_id: str) -> dict[str, Any]:
        return self.run("get", observation_id)

    def add(self, observations: list[dict[str, Any]]) -> dict[str, Any]:
        return self.run("add", {"observations": observations})

    def facets(self) -> dict[str, Any]:
        """The cheapest authenticated call: whether the key works and the store answers."""
        return self.run("facets")

    def mcp_handshake(self) -> dict[str, Any]:
        """MCP's ``initialize`` at ``/mcp``: the server's reply (its protocol version, its name)."""
        reply = _object(self.call("POST", "/mcp", MCP_INITIALIZE))
        result = reply.get("result")
        if not isinstance(result, dict) or "protocolVersion" not in result:
            raise MemoryUnavailable(f"POST /mcp: not an MCP handshake reply: {str(reply)[:200]}")
        return result


MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "neural-memory-agents", "version": "1"},
    },
}


def serves_mcp(url: str, key: str | None, timeout: float) -> bool:
    """Whether the API at ``url`` serves MCP at ``/mcp``: its handshake answers, or (without a key
    that works) the route refuses the key with a 401, as only an existing route behind the key
    does (a route that is not there is a 404, or API Gateway's 403)."""
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    try:
        status, raw = request(url, "POST", "/mcp", json.dumps(MCP_INITIALIZE).encode(), headers, timeout)
    except (OSError, HttpError, ValueError):
        return False
    if status == 401:
        return True
    try:
        reply = json.loads(raw or b"{}")
    except ValueError:
        return False
    result = reply.get("result") if isinstance(reply, dict) else None
    return status == 200 and isinstance(result, dict) and "protocolVersion" in result


def request(
    url: str, method: str, path: str, data: bytes | None, headers: Mapping[str, str], timeout: float
) -> tuple[int, bytes]:
    """One HTTP exchange with the API at ``url``: the status and the body."""
    scheme, _, rest = url.partition("://")
    netloc, slash, base = rest.partition("/")
    target = (slash + base).rstrip("/") + path
    if scheme == "https":
        return _over_tls(netloc, method, target, data, headers, timeout)
    if scheme != "http" or not netloc:
        raise ValueError(f"not an http(s) URL: {url!r}")
    host, _, port = netloc.rpartition(":") if netloc.rsplit(":", 1)[-1].isdigit() else (netloc, "", "80")
    lines = [
        f"{method} {target} HTTP/1.1",
        f"Host: {netloc}",
        "Connection: close",
        f"Content-Length: {len(data or b'')}",
    ]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    message = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (data or b"")
    ends = time.monotonic() + timeout
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as connection:
        connection.sendall(message)
        received = bytearray()
        while chunk := connection.recv(65536):
            received += chunk
            if time.monotonic() > ends:
                raise TimeoutError
            connection.settimeout(max(0.01, ends - time.monotonic()))
    return _parsed(bytes(received))


def _parsed(reply: bytes) -> tuple[int, bytes]:
    head, separator, body = reply.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if not separator or len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise HttpError("not an HTTP reply")
    fields = {name.strip().lower(): value.strip() for name, _, value in (h.partition(":") for h in header_lines)}
    if "chunked" in fields.get("transfer-encoding", "").lower():
        body = _unchunked(body)
    elif (length := fields.get("content-length", "")).isdigit():
        body = body[: int(length)]
    return int(parts[1]), body


def _unchunked(body: bytes) -> bytes:
    whole = bytearray()
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        whole += rest[:size]
        body = rest[size + 2 :]
    return bytes(whole)


def _over_tls(
    netloc: str, method: str, target: str, data: bytes | None, headers: Mapping[str, str], timeout: float
) -> tuple[int, bytes]:
    import http.client

    connection = http.client.HTTPSConnection(netloc, timeout=timeout)
    try:
        connection.request(method, target, body=data, headers=dict(headers))
        reply = connection.getresponse()
        return reply.status, reply.read()
    except http.client.HTTPException as exc:
        raise HttpError(str(exc)) from exc
    finally:
        connection.close()


def healthy(url: str, timeout: float) -> bool:
    """Whether an API answers its health route at ``url`` within ``timeout``."""
    try:
        status, _ = request(url, "GET", "/health", None, {}, timeout)
    except (OSError, HttpError, ValueError):
        return False
    return 200 <= status < 300


def _object(document: Any) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise MemoryUnavailable("the reply is not a JSON object")
    return document


def _error_code(raw: bytes) -> str:
    """The error envelope's code, when the body has one."""
    try:
        document = json.loads(raw or b"{}")
    except ValueError:
        return ""
    found = document.get("error") if isinstance(document, dict) else None
    if isinstance(found, dict):
        found = found.get("code")
    return str(found) if isinstance(found, str) else ""
