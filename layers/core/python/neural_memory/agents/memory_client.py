"""The memory's HTTP API as a hook calls it: the standard library's ``http.client`` only (the typed
client in ``neural_memory.client`` needs httpx and pydantic, and even ``urllib.request`` costs a
hook started on every prompt twice what ``http.client`` does). Every failure is one exception,
``MemoryUnavailable``, whose reason the hook logs; nothing here ever raises anything else."""

from __future__ import annotations

import http.client
import json
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

if TYPE_CHECKING:
    from collections.abc import Mapping


class MemoryUnavailable(Exception):
    """The memory did not answer usefully: unreachable, too slow, an error status, not JSON."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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
        except (OSError, http.client.HTTPException, ValueError) as error:
            raise MemoryUnavailable(f"{method} {path}: unreachable ({error or type(error).__name__})") from None
        if not 200 <= status < 300:
            raise MemoryUnavailable(f"{method} {path}: HTTP {status} {_error_code(raw)}".rstrip())
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            raise MemoryUnavailable(f"{method} {path}: the reply is not JSON") from None

    def search(self, body: dict[str, Any]) -> dict[str, Any]:
        return _object(self.call("POST", "/v1/search", body))

    def experts(self, body: dict[str, Any]) -> dict[str, Any]:
        return _object(self.call("POST", "/v1/experts", body))

    def lineage(self, observation_id: str) -> dict[str, Any]:
        return _object(self.call("GET", f"/v1/observations/{quote(observation_id, safe='')}/lineage"))

    def get(self, observation_id: str) -> dict[str, Any]:
        return _object(self.call("GET", f"/v1/observations/{quote(observation_id, safe='')}"))

    def add(self, observations: list[dict[str, Any]]) -> dict[str, Any]:
        return _object(self.call("POST", "/v1/observations", {"observations": observations}))

    def facets(self) -> dict[str, Any]:
        """The cheapest authenticated call: whether the key works and the store answers."""
        return _object(self.call("GET", "/v1/facets"))


def request(
    url: str, method: str, path: str, data: bytes | None, headers: Mapping[str, str], timeout: float
) -> tuple[int, bytes]:
    """One HTTP exchange with the API at ``url``: the status and the body."""
    parts = urlsplit(url)
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(parts.netloc, timeout=timeout)
    elif parts.scheme == "http":
        connection = http.client.HTTPConnection(parts.netloc, timeout=timeout)
    else:
        raise ValueError(f"not an http(s) URL: {url!r}")
    try:
        connection.request(method, parts.path.rstrip("/") + path, body=data, headers=dict(headers))
        reply = connection.getresponse()
        return reply.status, reply.read()
    finally:
        connection.close()


def healthy(url: str, timeout: float) -> bool:
    """Whether an API answers its health route at ``url`` within ``timeout``."""
    try:
        status, _ = request(url, "GET", "/health", None, {}, timeout)
    except (OSError, http.client.HTTPException, ValueError):
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
