"""Stores, chosen by settings in one factory and imported only when chosen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from neural_memory.embeddings.base import Embedder
    from neural_memory.keys import KeyStore
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store


def build_store(settings: Settings) -> Store:
    """The store named by ``settings.store``; constructing it does no I/O."""
    if settings.store == "sqlite":
        from neural_memory.stores.sqlite import SqliteStore  # numpy loads only here

        return SqliteStore(settings.sqlite_path)
    if settings.store == "opensearch":
        from neural_memory.stores.opensearch import OpenSearchStore
        from neural_memory.stores.opensearch_client import build_client

        return OpenSearchStore(
            build_client(settings),
            settings.opensearch_index,
            refresh=settings.opensearch_refresh,
            bulk_max_bytes=settings.opensearch_bulk_max_bytes,
        )
    raise ConfigurationError(f"unknown store {settings.store!r}")


def ensure_store(settings: Settings, embedder: Embedder | None) -> str:
    """Create or verify the store's index for this embedder (OpenSearch); the embedded store
    creates its schema on open. Returns what was done. For start-up and the maintenance function."""
    if settings.store != "opensearch":
        return "ok"
    from neural_memory.stores.opensearch import OpenSearchAdmin
    from neural_memory.stores.opensearch_client import build_client

    admin = OpenSearchAdmin(
        build_client(settings),
        settings.opensearch_index,
        shards=settings.opensearch_shards,
        replicas=settings.opensearch_replicas,
    )
    if embedder is None:
        return admin.ensure_index(1, "none")
    return admin.ensure_index(embedder.dimension, embedder.model_id)


def build_key_store(settings: Settings) -> KeyStore:
    """The API key store named by ``settings.key_store``: the authorizer, the CLI and the local
    gateway all get theirs here. Constructing it does no I/O."""
    if settings.key_store == "dynamodb":
        if not settings.keys_table:
            raise ConfigurationError("NM_KEYS_TABLE is not set but NM_KEY_STORE=dynamodb")
        from neural_memory.stores.dynamodb_keys import DynamoKeyStore  # boto3 loads on first use

        return DynamoKeyStore(settings.keys_table)
    from neural_memory.stores.sqlite_keys import SqliteKeyStore

    return SqliteKeyStore(settings.sqlite_path)
