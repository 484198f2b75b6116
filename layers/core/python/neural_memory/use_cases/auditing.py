"""Reading the audit trail (``GET /v1/audit``, ``neural-memory audit``): admin keys only."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from neural_memory.audit.trail import entry
from neural_memory.errors import ConfigurationError
from neural_memory.models import AuditEntryOut, AuditResponse

if TYPE_CHECKING:
    from collections.abc import Iterable

    from neural_memory.audit.trail import AuditEntry, AuditLog
    from neural_memory.auth.roles import Caller
    from neural_memory.models.audit import AuditQuery
    from neural_memory.use_cases.scrubbing import ScrubReport


@dataclass(frozen=True)
class AuditTrail:
    """The audit trail of one store's workspaces (None: the store keeps none)."""

    audit: AuditLog | None

    def page(self, *, workspace_id: str, query: AuditQuery, request_id: str, caller: Caller) -> AuditResponse:
        """One page of the workspace's audit trail, newest first; ``Forbidden`` below ``admin``."""
        caller.require("admin", "reading the audit trail")
        if self.audit is None:
            raise ConfigurationError("this store keeps no audit trail")
        # One more than the page: whether there is a next page, without a count.
        return _page(self.audit.read(workspace_id, replace(query, limit=query.limit + 1)), query, request_id)


def _page(found: list[AuditEntry], query: AuditQuery, request_id: str) -> AuditResponse:
    page = found[: query.limit]
    entries = [
        AuditEntryOut(
            id=e.id, at=e.at, key=e.key, action=e.action, ids=e.ids, count=e.count, call_request_id=e.request_id
        )
        for e in page
    ]
    more = len(found) > query.limit
    return AuditResponse(entries=entries, next_cursor=page[-1].id if more and page else None, request_id=request_id)


class ScrubTally:
    """A scrub's audit entries: how many records it rewrote in each workspace, told by its
    progress reports (``Scrub.run``'s ``progress``), recorded when it ends (counts only: the
    records it rewrote are listed nowhere)."""

    def __init__(self, audit: AuditLog | None, caller: Caller) -> None:
        self._audit = audit
        self._caller = caller
        self._seen = 0
        self.redacted: dict[str, int] = {}

    def progress(self, report: ScrubReport) -> None:
        """One progress report: what was redacted since the last is the current workspace's."""
        workspace = report.cursor.workspace
        if workspace is not None:
            self.redacted[workspace] = self.redacted.get(workspace, 0) + report.redacted - self._seen
        self._seen = report.redacted

    def record(self, workspaces: Iterable[str]) -> None:
        """One ``scrub`` entry per workspace scanned, with how many of its records were rewritten."""
        if self._audit is None:
            return
        for workspace in workspaces:
            done = entry(self._caller.name, "scrub", [], count=self.redacted.get(workspace, 0))
            self._audit.record(workspace, [done])
