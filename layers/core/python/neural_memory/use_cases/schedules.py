"""What the maintenance function's schedules ask of the service, by event: ``{"action": "scrub",
"cursor": ...}`` (secrets out of what was stored before redaction, until the deadline, answering
with the cursor to invoke it again with), ``RESUME_EVENT`` (resume a reindex a deploy could not
finish) and anything else (the daily upkeep: purge expired observations, archive old E ones)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from neural_memory.auth.roles import system
from neural_memory.observability import logger
from neural_memory.use_cases.auditing import ScrubTally
from neural_memory.use_cases.scrubbing import ScrubCursor

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from datetime import datetime

    from neural_memory.audit.trail import AuditLog
    from neural_memory.auth.roles import Caller
    from neural_memory.use_cases.scrubbing import ScrubReport

# The event of the maintenance schedule that resumes a reindex a deploy could not finish.
RESUME_EVENT = {"action": "reindex"}
MAINTENANCE = system("maintenance")  # who purges and scrubs, in the audit trail


class Maintained(Protocol):
    """What the schedules call (``Service`` is one)."""

    @property
    def audit(self) -> AuditLog | None: ...
    def scrub(
        self,
        cursor: ScrubCursor | None = None,
        *,
        deadline: float | None = None,
        progress: Callable[[ScrubReport], None] | None = None,
        only: str | None = None,
    ) -> ScrubReport: ...
    def ensure_index(self, *, deadline: float | None = None) -> str: ...
    def maintain(self, now: datetime, caller: Caller = ...) -> dict[str, int]: ...


def run_schedule(service: Maintained, event: Mapping[str, Any], *, deadline: float, now: datetime) -> dict[str, Any]:
    """The event's work, and what it did (logged too)."""
    if event.get("action") == "scrub":
        tally = ScrubTally(service.audit, MAINTENANCE)  # each workspace's count, for its audit trail
        report = service.scrub(
            ScrubCursor.from_json(event.get("cursor") or {}), deadline=deadline, progress=tally.progress
        )
        tally.record(list(tally.redacted))
        done = {"finished": report.finished, "scanned": report.scanned, "redacted": report.redacted}
        logger.info("scrub", extra=done)
        return {**done, "cursor": report.cursor.to_json()}
    if event.get("action") == RESUME_EVENT["action"]:
        outcome = service.ensure_index(deadline=deadline)
        logger.info("index check", extra={"outcome": outcome})
        return {"outcome": outcome}
    purged = service.maintain(now, MAINTENANCE)
    logger.info("purged expired observations, archived old E ones", extra=purged)
    return dict(purged)
