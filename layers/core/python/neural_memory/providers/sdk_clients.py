"""Provider SDK clients (Cohere, Anthropic, OpenAI), built on first use: the SDKs are slow to import
(anthropic alone takes over a second), so handlers never pay for them at cold start, and API keys
(possibly in Secrets Manager) are read only by the function that actually calls the provider."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from neural_memory.errors import ConfigurationError

# A key, no key, or how to get it when first needed (e.g. ``Settings.cohere_key``).
ApiKey = str | None | Callable[[], str | None]


class LazyClient:
    """Calls ``build`` on the first ``get()``, thread-safely; a failed build is tried again next time."""

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


def _resolve(api_key: ApiKey) -> str | None:
    return api_key() if callable(api_key) else api_key


def lazy_cohere(api_key: ApiKey, timeout_s: float, http_client: Any = None) -> LazyClient:
    """Cohere's v2 client; ``ConfigurationError`` at first use when no key is configured, and
    ``SecretUnavailable`` (a ``ConfigurationError``) when its secret cannot be read."""

    def build() -> Any:
        key = _resolve(api_key)
        if not key:
            raise ConfigurationError("NM_COHERE_API_KEY (or NM_COHERE_SECRET_ARN) is not set")
        # The generated v2 client alone: ``cohere.ClientV2`` adds local tokenizers and avro
        # helpers (tokenizers, fastavro: ~15 MB in the layer) that embed and rerank never use.
        from cohere.base_client import BaseCohere

        return BaseCohere(token=key, base_url=os.getenv("CO_API_URL"), timeout=timeout_s, httpx_client=http_client).v2

    return LazyClient(build)


def lazy_anthropic(api_key: ApiKey, timeout_s: float, http_client: Any = None) -> LazyClient:
    """``anthropic.Anthropic`` with no retries (every caller has a faster fallback than a retry);
    ``http_client`` is an ``httpx2.Client``, the SDK's transport (tests pass a mock one)."""

    def build() -> Any:
        key = _resolve(api_key)
        if not key:
            raise ConfigurationError("NM_ANTHROPIC_API_KEY (or NM_ANTHROPIC_SECRET_ARN) is not set")
        import anthropic

        return anthropic.Anthropic(api_key=key, timeout=timeout_s, max_retries=0, http_client=http_client)

    return LazyClient(build)


def lazy_openai(api_key: ApiKey, timeout_s: float, http_client: Any = None) -> LazyClient:
    """``openai.OpenAI`` with no retries (as Anthropic's); ``http_client`` is an ``httpx2.Client``,
    the SDK's transport (tests pass a mock one). ``OPENAI_BASE_URL`` points it elsewhere (the
    deployed-shape tests, an OpenAI-compatible gateway)."""

    def build() -> Any:
        key = _resolve(api_key)
        if not key:
            raise ConfigurationError("NM_OPENAI_API_KEY (or NM_OPENAI_SECRET_ARN) is not set")
        import openai

        return openai.OpenAI(api_key=key, timeout=timeout_s, max_retries=0, http_client=http_client)

    return LazyClient(build)
