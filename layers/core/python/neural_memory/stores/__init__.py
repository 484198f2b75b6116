"""Stores, chosen by settings in one factory and imported only when chosen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store


def build_store(settings: Settings) -> Store:
    """The store named by ``settings.store``; constructing it does no I/O."""
    if settings.store == "sqlite":
        from neural_memory.stores.sqlite import SqliteStore  # noqa: PLC0415 - numpy loads only here

        return SqliteStore(settings.sqlite_path)
    raise ConfigurationError(f"store {settings.store!r} is not available in this build; use NM_STORE=sqlite")
