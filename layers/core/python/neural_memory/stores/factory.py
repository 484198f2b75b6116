"""The store and its index admin, chosen by settings and imported only when chosen. No store imports
this module or ``neural_memory.auth`` back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store
    from neural_memory.stores.opensearch.workspace_indices import WorkspaceIndices


def build_store(settings: Settings) -> Store:
    """The store named by ``settings.store``; constructing it does no I/O."""
    if settings.store == "sqlite":
        from neural_memory.stores.sqlite.store import SqliteStore  # numpy loads only here

        return SqliteStore(settings.sqlite_path, settings.sqlite_synchronous)
    if settings.store == "opensearch":
        from neural_memory.stores.opensearch.client import build_client
        from neural_memory.stores.opensearch.store import OpenSearchStore

        return OpenSearchStore(
            build_client(settings),
            settings.opensearch_index,
            refresh=settings.opensearch_refresh,
            bulk_max_bytes=settings.opensearch_bulk_max_bytes,
        )
    raise ConfigurationError(f"unknown store {settings.store!r}")


def build_indices(settings: Settings) -> WorkspaceIndices | None:
    """Index management for the OpenSearch store, an index per workspace (None for the embedded
    one, which creates its schema on open). Constructing it does no I/O."""
    if settings.store != "opensearch":
        return None
    from neural_memory.stores.opensearch.client import build_client
    from neural_memory.stores.opensearch.workspace_indices import WorkspaceIndices

    return WorkspaceIndices(
        build_client(settings),
        settings.opensearch_index,
        shards=settings.opensearch_shards,
        replicas=settings.opensearch_replicas,
    )


def ensure_store(settings: Settings, embedder: Embedder | None) -> str:
    """Create or verify the store's index for this embedder; returns what was done. For start-up:
    the embedded store built by another model than ``embedder``'s is refused
    (``StoreModelMismatch``, naming ``neural-memory reindex``)."""
    indices = build_indices(settings)
    if indices is None:
        if settings.store == "sqlite":
            from neural_memory.stores.sqlite.store import SqliteStore

            store = SqliteStore(settings.sqlite_path, settings.sqlite_synchronous)
            try:
                store.verify_model((embedder.model_id, embedder.dimension) if embedder is not None else None)
            finally:
                store.close()
        return "ok"
    from neural_memory.stores.opensearch.index import space_of  # only the OpenSearch store has an index to check
    from neural_memory.stores.opensearch.migration import legacy_notice

    done = indices.ensure(*space_of(embedder))
    notice = legacy_notice(indices)
    return f"{done}; {notice}" if notice else done
