"""The official Cohere SDK's v2 client, shared by the embedder and the reranker: imported and built
on first use (the SDK is slow to import), once, thread-safely."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from neural_memory.errors import ConfigurationError

if TYPE_CHECKING:
    import httpx


class LazyCohereClient:
    """Holds what the client needs; ``get()`` builds it the first time."""

    def __init__(self, api_key: str | None, timeout_s: float, http_client: httpx.Client | None = None) -> None:
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._http_client = http_client
        self._client: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        """The ``cohere.ClientV2``; ``ConfigurationError`` when no key is configured."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    if not self._api_key:
                        raise ConfigurationError("NM_COHERE_API_KEY (or NM_COHERE_SECRET_ARN) is not set")
                    import cohere  # noqa: PLC0415

                    self._client = cohere.ClientV2(
                        api_key=self._api_key, timeout=self._timeout_s, httpx_client=self._http_client
                    )
        return self._client
