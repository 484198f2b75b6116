"""Stores, chosen by settings in one factory and imported only when chosen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from neural_memory.embeddings.base import Embedder
    from neural_memory.keys import KeyStore
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store
    from neural_memory.stores.opensearch_index import OpenSearchAdmin


def build_store(settings: Settings) -> Store:
    """The store named by ``settings.store``; constructing it does no I/O."""
    if settings.store == "sqlite":
        from neural_memory.stores.sqlite import SqliteStore  # numpy loads only here

        return SqliteStore(settings.sqlite_path, settings.sqlite_synchronous)
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


def build_admin(settings: Settings) -> OpenSearchAdmin | None:
    """Index management for the OpenSearch store (None for the embedded one, which creates its
    schema on open). Constructing it does no I/O."""
    if settings.store != "opensearch":
        return None
    from neural_memory.stores.opensearch_client import build_client
    from neural_memory.stores.opensearch_index import OpenSearchAdmin

    return OpenSearchAdmin(
        build_client(settings),
        settings.opensearch_index,
        shards=settings.opensearch_shards,
        replicas=settings.opensearch_replicas,
    )


def ensure_store(settings: Settings, embedder: Embedder | None) -> str:
    """Create or verify the store's index for this embedder; returns what was done. For start-up."""
    admin = build_admin(settings)
    if admin is None:
        return "ok"
    from neural_memory.stores.opensearch_index import space_of  # only the OpenSearch store has an index to check

    return admin.ensure_index(*space_of(embedder))


def build_key_store(settings: Settings) -> KeyStore:
    """The API key store named by ``settings.key_store``: the authorizer, the CLI and the local
    gateway all get theirs here. Constructing it does no I/O."""
    if settings.key_store == "dynamodb":
        if not settings.keys_table:
            raise ConfigurationError("NM_KEYS_TABLE is not set but NM_KEY_STORE=dynamodb")
        from neural_memory.stores.dynamodb_keys import DynamoKeyStore  # boto3 loads on first use

        return DynamoKeyStore(settings.keys_table)
    from neural_memory.stores.sqlite_keys import SqliteKeyStore

    return SqliteKeyStore(settings.sqlite_path, settings.sqlite_synchronous)
