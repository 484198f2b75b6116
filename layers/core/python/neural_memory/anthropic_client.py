"""The official Anthropic SDK client, shared by the relevance gate and the answerer: imported and
built on first use (the SDK takes over a second to import), once, thread-safely. No retries:
a slow answer is worth less than the fallback each caller has."""

from __future__ import annotations

import threading
from typing import Any


class LazyAnthropicClient:
    """``get()`` builds ``anthropic.Anthropic`` the first time; ``http_client`` is an ``httpx2.Client``
    (the SDK's transport; tests pass one with a mock transport)."""

    def __init__(self, api_key: str, timeout_s: float, http_client: Any = None) -> None:
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._http_client = http_client
        self._client: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        """The client."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import anthropic  # noqa: PLC0415

                    self._client = anthropic.Anthropic(
                        api_key=self._api_key, timeout=self._timeout_s, max_retries=0, http_client=self._http_client
                    )
        return self._client
