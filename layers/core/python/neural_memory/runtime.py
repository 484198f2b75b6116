"""The process's service (``get_service``, built by ``build_service`` from the providers settings
name, on first use); the local server and tests install their own (``set_service``). The service's
modules load with this one, at import, as every handler that calls it needs them for every request
(the providers' SDKs still load on first use); the authorizer's key store is ``auth/process_keys.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.clock import utcnow
from neural_memory.service import Service

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from neural_memory.settings import Settings


def build_service(settings: Settings, clock: Callable[[], datetime] = utcnow) -> Service:
    """A service with the store and providers that ``settings`` name (``wiring.chosen_providers``:
    nothing loads until first use); ``clock`` is its time (an evaluation over dated data sets it to
    the data's own "now")."""
    from neural_memory.wiring import chosen_providers

    p = chosen_providers(settings)
    return Service(p.store, p.embedder, settings, clock, p.cache, p.scorer, p.reranker, p.answerer, p.proposer)


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
