"""The audit trail on OpenSearch: an index beside each workspace's, ``<workspace alias>-audit``
(``audit_index``), under the workspace indices' pattern, so the functions' grants on their
workspace indices (create on first write, ``_bulk``, ``_search``) are the grants on the trail:
nothing more is granted. Written through ``/<index>/_bulk`` with the store's refresh, read with
``_search`` newest first; created on the first entry with a mapping of its own (the workspace
template's strict mapping applies too: every field is declared)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from neural_memory.audit.trail import AuditEntry
from neural_memory.clock import to_iso
from neural_memory.errors import BackendUnavailable
from neural_memory.stores.opensearch.workspace_indices import workspace_alias

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models.audit import AuditQuery

_KEYWORD = {"type": "keyword"}
MAPPING = {
    "properties": {
        "audit_id": _KEYWORD,
        "audit_at": {"type": "date"},
        "audit_key": _KEYWORD,
        "audit_action": _KEYWORD,
        "audit_ids": {"type": "keyword", "index": False},
        "audit_count": {"type": "long"},
        "audit_request_id": {"type": "keyword", "index": False},
    }
}
_ALREADY = "resource_already_exists_exception"


def audit_index(prefix: str, workspace_id: str) -> str:
    """The audit index of ``workspace_id``: its alias and ``-audit`` (never a version's name, which
    ends in digits, nor an alias, which ends in 16 hex)."""
    return f"{workspace_alias(prefix, workspace_id)}-audit"


class OpenSearchAuditLog:
    """``AuditLog`` over one audit index per workspace."""

    def __init__(self, client: Any, prefix: str, refresh: str = "false") -> None:
        self._client = client
        self._prefix = prefix
        self._refresh = refresh
        self._created: set[str] = set()

    def record(self, workspace_id: str, entries: Sequence[AuditEntry]) -> None:
        if not entries:
            return
        index = audit_index(self._prefix, workspace_id)
        self._ensure(index)
        lines = []
        for e in entries:
            lines.append(json.dumps({"create": {"_id": e.id}}))
            lines.append(json.dumps(_document(e)))
        reply = self._call(self._client.bulk, index=index, body="\n".join(lines) + "\n", refresh=self._refresh)
        failed = [item for item in reply.get("items", []) if item.get("create", {}).get("status", 500) >= 300]
        if failed:
            raise BackendUnavailable(f"the audit trail refused {len(failed)} entries: {failed[0].get('create')}")

    def read(self, workspace_id: str, query: AuditQuery) -> list[AuditEntry]:
        conditions: list[dict[str, Any]] = []
        if query.key is not None:
            conditions.append({"term": {"audit_key": query.key}})
        if query.action is not None:
            conditions.append({"term": {"audit_action": query.action}})
        moments = {
            bound: to_iso(value) for bound, value in (("gte", query.start), ("lte", query.end)) if value is not None
        }
        if moments:
            conditions.append({"range": {"audit_at": moments}})
        if query.cursor is not None:
            conditions.append({"range": {"audit_id": {"lt": query.cursor}}})
        body = {
            "query": {"bool": {"filter": conditions}},
            "sort": [{"audit_id": "desc"}],
            "size": query.limit,
        }
        index = audit_index(self._prefix, workspace_id)
        reply = self._call(self._client.search, index=index, body=body, ignore_unavailable=True)
        return [_entry(hit["_source"]) for hit in reply.get("hits", {}).get("hits", [])]

    def _ensure(self, index: str) -> None:
        if index in self._created:
            return
        from opensearchpy.exceptions import RequestError

        try:
            self._call(self._client.indices.create, index=index, body={"mappings": MAPPING})
        except RequestError as exc:
            if _ALREADY not in str(exc.error):
                raise
        self._created.add(index)

    @staticmethod
    def _call(method: Any, **kwargs: Any) -> Any:
        from opensearchpy.exceptions import ConnectionError as OsConnectionError
        from opensearchpy.exceptions import ConnectionTimeout

        try:
            return method(**kwargs)
        except (OsConnectionError, ConnectionTimeout) as exc:
            raise BackendUnavailable(f"OpenSearch unreachable: {type(exc).__name__}") from exc


def _document(e: AuditEntry) -> dict[str, Any]:
    return {
        "audit_id": e.id,
        "audit_at": to_iso(e.at),
        "audit_key": e.key,
        "audit_action": e.action,
        "audit_ids": e.ids,
        "audit_count": e.count,
        "audit_request_id": e.request_id,
    }


def _entry(source: dict[str, Any]) -> AuditEntry:
    from neural_memory.clock import from_iso

    return AuditEntry(
        id=source["audit_id"],
        at=from_iso(source["audit_at"]),
        key=source["audit_key"],
        action=source["audit_action"],
        ids=list(source.get("audit_ids") or []),
        count=int(source["audit_count"]),
        request_id=source.get("audit_request_id"),
    )
