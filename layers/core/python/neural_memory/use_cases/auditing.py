"""Reading the audit trail (``GET /v1/audit``, ``neural-memory audit``): admin keys only."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from neural_memory.errors import ConfigurationError
from neural_memory.models import AuditEntryOut, AuditResponse

if TYPE_CHECKING:
    from neural_memory.audit.trail import AuditLog, AuditQuery
    from neural_memory.auth.roles import Caller


def audit_trail(
    audit: AuditLog | None, workspace_id: str, query: AuditQuery, request_id: str, caller: Caller
) -> AuditResponse:
    """One page of the workspace's audit trail, newest first; ``Forbidden`` below ``admin``."""
    caller.require("admin", "reading the audit trail")
    if audit is None:
        raise ConfigurationError("this store keeps no audit trail")
    # One more than the page: whether there is a next page, without a count.
    found = audit.read(workspace_id, replace(query, limit=query.limit + 1))
    page = found[: query.limit]
    entries = [
        AuditEntryOut(
            id=e.id, at=e.at, key=e.key, action=e.action, ids=e.ids, count=e.count, call_request_id=e.request_id
        )
        for e in page
    ]
    more = len(found) > query.limit
    return AuditResponse(entries=entries, next_cursor=page[-1].id if more and page else None, request_id=request_id)
