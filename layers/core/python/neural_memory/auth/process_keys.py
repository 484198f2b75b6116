"""The process's key store, the one the authorizer checks keys against: built on first use from the
settings (``auth/factory.py``); the local gateway and tests install their own (``set_key_store``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neural_memory.auth.base import KeyStore

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
