"""A store's audit trail: kept where its observations are (``AuditLog`` of the store's kind)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neural_memory.audit.trail import AuditLog
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store


def audit_log_for(store: Store) -> AuditLog | None:
    """The audit trail beside ``store``'s observations: the embedded store's file, or the OpenSearch
    domain's workspace indices; None for any other store (a test double keeps none)."""
    from neural_memory.stores.sqlite.store import SqliteStore

    if isinstance(store, SqliteStore):
        from neural_memory.audit.sqlite import SqliteAuditLog

        return SqliteAuditLog(store.path, store.synchronous)
    from neural_memory.stores.opensearch.store import OpenSearchStore

    if isinstance(store, OpenSearchStore):
        from neural_memory.audit.opensearch import OpenSearchAuditLog

        return OpenSearchAuditLog(store.client, store.prefix, store.refresh)
    return None


def audit_log_of(settings: Settings) -> AuditLog:
    """The audit trail of the store ``settings`` name, without building the store (the CLI's key
    commands record there). Constructing it does no I/O."""
    if settings.store == "opensearch":
        from neural_memory.audit.opensearch import OpenSearchAuditLog
        from neural_memory.stores.opensearch.client import build_client

        return OpenSearchAuditLog(build_client(settings), settings.opensearch_index, settings.opensearch_refresh)
    from neural_memory.audit.sqlite import SqliteAuditLog

    return SqliteAuditLog(settings.sqlite_path, settings.sqlite_synchronous)
