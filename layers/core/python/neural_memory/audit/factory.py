"""A store's audit trail: kept where its observations are (``AuditLog`` of the store's kind)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neural_memory.audit.trail import AuditLog
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store


def audit_log_for(store: Store) -> AuditLog | None:
    """The audit trail beside ``store``'s observations: the embedded store's file, or the OpenSearch
    domain's workspace indices; None for any other store (a test double keeps none). Told apart
    by the store's module, so the Lambda layer, which holds no SQLite store, never imports one."""
    kind = type(store).__module__
    if kind == "neural_memory.stores.sqlite.store":
        from neural_memory.audit.sqlite import SqliteAuditLog

        path, synchronous = getattr(store, "path"), getattr(store, "synchronous")  # noqa: B009 - see above
        return SqliteAuditLog(path, synchronous)
    if kind == "neural_memory.stores.opensearch.store":
        from neural_memory.audit.opensearch import OpenSearchAuditLog

        client, prefix, refresh = getattr(store, "client"), getattr(store, "prefix"), getattr(store, "refresh")  # noqa: B009
        return OpenSearchAuditLog(client, prefix, refresh)
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
