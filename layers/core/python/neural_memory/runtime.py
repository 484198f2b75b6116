"""The process's singletons: the service (``get_service``, built by ``build_service`` from the
providers settings name) and the key store the authorizer checks keys against (``get_key_store``).

Each is built on first use from the settings; the local gateway and tests install their own with
``set_service`` and ``set_key_store``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from neural_memory.auth.base import KeyStore
    from neural_memory.service import Service
    from neural_memory.settings import Settings

_key_store: KeyStore | None = None


def get_key_store() -> KeyStore:
    """The process-wide key store (``build_key_store(get_settings())`` on first call)."""
    global _key_store  # noqa: PLW0603 - one store (and client) per process, like the service
    if _key_store is None:
        from neural_memory.auth.factory import build_key_store
        from neural_memory.settings import get_settings

        _key_store = build_key_store(get_settings())
    return _key_store


def set_key_store(store: KeyStore | None) -> None:
    """Install the key store the authorizer uses (the local gateway and tests bring their own)."""
    global _key_store  # noqa: PLW0603
    _key_store = store


def build_service(settings: Settings, clock: Callable[[], datetime] | None = None) -> Service:
    """A service with the store and providers that ``settings`` name (``wiring.chosen_providers``:
    nothing loads until first use); ``clock`` is its time (an evaluation over dated data sets it to
    the data's own "now")."""
    from neural_memory.clock import utcnow
    from neural_memory.service import Service
    from neural_memory.wiring import chosen_providers

    p = chosen_providers(settings)
    return Service(
        p.store, p.embedder, settings, clock or utcnow, p.cache, p.scorer, p.reranker, p.answerer, p.proposer
    )


_service: Service | None = None


def get_service() -> Service:
    """The process-wide service, built from ``get_settings()`` on first call."""
    global _service  # noqa: PLW0603 - one service per process, like Powertools' singletons
    if _service is None:
        from neural_memory.settings import get_settings

        _service = build_service(get_settings())
    return _service


def current_settings() -> Settings:
    """The installed service's settings, else ``get_settings()``: for handlers that need no store
    (the webhook receivers), so they never build one."""
    if _service is not None:
        return _service.settings
    from neural_memory.settings import get_settings

    return get_settings()


def set_service(service: Service | None) -> None:
    """Install the service the handlers use (the local server and tests build their own)."""
    global _service  # noqa: PLW0603
    _service = service
