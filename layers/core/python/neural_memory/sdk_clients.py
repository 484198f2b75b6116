"""Provider SDK clients (Cohere, Anthropic), built on first use: the SDKs are slow to import
(anthropic alone takes over a second), so handlers never pay for them at cold start."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from neural_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Callable


class LazyClient:
    """Calls ``build`` once, on the first ``get()``, thread-safely."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._client: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        """The client, built now if it was not yet."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = self._build()
        return self._client


def lazy_cohere(api_key: str | None, timeout_s: float, http_client: Any = None) -> LazyClient:
    """``cohere.ClientV2``; ``ConfigurationError`` at first use when no key is configured."""

    def build() -> Any:
        if not api_key:
            raise ConfigurationError("NM_COHERE_API_KEY (or NM_COHERE_SECRET_ARN) is not set")
        import cohere  # noqa: PLC0415

        return cohere.ClientV2(api_key=api_key, timeout=timeout_s, httpx_client=http_client)

    return LazyClient(build)


def lazy_anthropic(api_key: str, timeout_s: float, http_client: Any = None) -> LazyClient:
    """``anthropic.Anthropic`` with no retries (every caller has a faster fallback than a retry);
    ``http_client`` is an ``httpx2.Client``, the SDK's transport (tests pass a mock one)."""

    def build() -> Any:
        import anthropic  # noqa: PLC0415

        return anthropic.Anthropic(api_key=api_key, timeout=timeout_s, max_retries=0, http_client=http_client)

    return LazyClient(build)
