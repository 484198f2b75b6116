"""Secrets out of what was stored before redaction existed (``neural-memory scrub``, the maintenance
function's ``scrub`` action): every record of every workspace read in time order, redacted as a
write would be (``redaction/observations``), and written again where that changed it: its chunks
cut again and re-embedded (the embedding cache serves the unchanged passages), the turns whose
context chunk quotes it cut again too, each write conditional on the record being unchanged since
read (a record written meanwhile went through redaction already).

Identifiers are reached too (``redaction/records.py``): a record whose id held a secret is written
under its derived id and the original deleted, so ``GET`` of the original id finds it as it would
after a write.

Over the store port, so one use case for both stores. Idempotent (a placeholder is never a secret)
and resumable: the ``ScrubCursor`` says where it stopped (a workspace and a time), and a run from
it redoes at most the records of that instant.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from neural_memory.domain.record_rules import lifecycle_state
from neural_memory.ingest.prepare import chunked
from neural_memory.ingest.turn_context import add_stored_turn_context
from neural_memory.redaction.records import redact_record
from neural_memory.stores.find import Find

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from neural_memory.models import ObservationRecord
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store
    from neural_memory.use_cases.chat_turns import ChatTurns
    from neural_memory.use_cases.embedding import Embedding

PAGE = 200  # records read (and at most written) at a time
# Times are kept to the millisecond by both stores: the records of one instant are those after it
# less this and at or before it.
INSTANT = timedelta(milliseconds=1)


@dataclass
class ScrubCursor:
    """Where a scrub stands: the workspaces done, the one under way and the time it has reached."""

    done: list[str] = field(default_factory=list)
    workspace: str | None = None
    after: datetime | None = None

    def to_json(self) -> dict[str, object]:
        """The cursor as JSON (a file the command keeps, the maintenance function's reply)."""
        return {"done": self.done, "workspace": self.workspace, "after": self.after and self.after.isoformat()}

    @classmethod
    def from_json(cls, saved: Mapping[str, Any]) -> ScrubCursor:
        after = datetime.fromisoformat(saved["after"]) if saved.get("after") else None
        return cls(done=list(saved.get("done", [])), workspace=saved.get("workspace"), after=after)


@dataclass
class ScrubReport:
    """What a run did: records read, records rewritten with something redacted, records that changed
    while being scrubbed (written since, so redacted by that write), and whether it finished."""

    scanned: int = 0
    redacted: int = 0
    raced: int = 0
    finished: bool = False
    cursor: ScrubCursor = field(default_factory=ScrubCursor)


@dataclass(frozen=True)
class Scrub:
    """Scrubs over one store (``run``), from a cursor, until done or a deadline: changed records cut
    and embedded as ``embedding`` says, the turns quoting them cut again (``turns``)."""

    store: Store
    embedding: Embedding
    turns: ChatTurns
    settings: Settings
    clock: Callable[[], datetime]

    def workspaces(self) -> dict[str, int]:
        """Every workspace and how many records it holds."""
        return self.store.count(None, by="workspace_id")

    def run(
        self,
        cursor: ScrubCursor | None = None,
        *,
        deadline: float | None = None,
        progress: Callable[[ScrubReport], None] | None = None,
        only: str | None = None,
    ) -> ScrubReport:
        """Scrub from ``cursor`` (None: the start) through every workspace (``only``: that one),
        calling ``progress`` after each page; stops at ``deadline`` (``time.monotonic()``) with the
        cursor to resume from."""
        report = ScrubReport(cursor=cursor or ScrubCursor())
        for workspace_id in sorted(self.workspaces()):
            if workspace_id in report.cursor.done or (only is not None and workspace_id != only):
                continue
            if report.cursor.workspace != workspace_id:
                report.cursor.workspace, report.cursor.after = workspace_id, None
            while (page := self._page(workspace_id, report.cursor.after)) is not None:
                self._scrub(workspace_id, page, report)
                report.cursor.after = page[-1].occurred_at
                if progress is not None:
                    progress(report)
                if deadline is not None and time.monotonic() >= deadline:
                    return report
            report.cursor.done.append(workspace_id)
            report.cursor.workspace, report.cursor.after = None, None
        report.finished = True
        return report

    def _page(self, workspace_id: str, after: datetime | None) -> list[ObservationRecord] | None:
        """The next records in time order, ending at a whole instant: a page that ends inside one
        takes the rest of that instant too, so a cursor of times never skips a record."""
        store = self.store
        page = store.find(workspace_id, Find(occurred_after=after, limit=PAGE))
        if not page:
            return None
        if len(page) == PAGE:
            last = page[-1].occurred_at
            seen = {r.id for r in page}
            instant = store.find(workspace_id, Find(occurred_after=last - INSTANT, occurred_by=last))
            page += [r for r in instant if r.id not in seen]
        return page

    def _scrub(self, workspace_id: str, page: list[ObservationRecord], report: ScrubReport) -> None:
        report.scanned += len(page)
        pairs = [(record, changed) for record in page if (changed := redact_record(record)) is not None]
        if not pairs:
            return
        now = self.clock()
        items = [chunked(changed, self.embedding.chunking, now) for _, changed in pairs]
        turns_before = self.settings.turn_context
        if turns_before and self.embedding.embedder is not None:
            add_stored_turn_context(items, self.turns.earlier_turn(workspace_id), turns_before)
        self.embedding.embed_chunks(workspace_id, items)
        # Re-keyed (an id that held a secret): the derived id must be absent, the original is deleted after.
        expected = {
            changed.id: lifecycle_state(record if changed.id == record.id else None) for record, changed in pairs
        }
        outcome = self.store.write(workspace_id, items, expected)
        missed = set(outcome.stale) | set(outcome.failed)
        written = [changed for _, changed in pairs if changed.id not in missed]
        for record, changed in pairs:
            if changed.id != record.id and changed.id not in missed:
                self.store.delete(workspace_id, record.id)
        report.redacted += len(written)
        report.raced += len(missed)
        self.turns.recut_turns_quoting(workspace_id, written)
