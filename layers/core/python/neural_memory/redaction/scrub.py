"""Secrets out of what was stored before redaction existed (``neural-memory scrub``, the maintenance
function's ``scrub`` action): every record of every workspace read in time order, redacted as a
write would be (``redaction/observations``), and written again where that changed it: its chunks
cut again and re-embedded (the embedding cache serves the unchanged passages), the turns whose
context chunk quotes it cut again too, each write conditional on the record being unchanged since
read (a record written meanwhile went through redaction already).

Identifiers are reached too (``id``, ``parentId``, ``supersedes``, ``supersededBy``, ``sessionId``,
``actorName``, ``source``, ``sourceType``, ``observationType``, ``promotedBy``), as a write derives
them (``redaction.identifiers``): a record whose id held a secret is written under its derived id
and the original deleted, so ``GET`` of the original id finds it as it would after a write.

Over the store port, so one use case for both stores. Idempotent (a placeholder is never a secret)
and resumable: the ``ScrubCursor`` says where it stopped (a workspace and a time), and a run from
it redoes at most the records of that instant.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from neural_memory.ingest.ids import recurrence_key
from neural_memory.ingest.prepare import chunked, indexed_hash
from neural_memory.ingest.turn_context import add_stored_turn_context
from neural_memory.redaction.identifiers import redact_identifier
from neural_memory.redaction.observations import FREE_TEXT_IDENTIFIERS, redact_metadata, redact_text
from neural_memory.stores.base import lifecycle_state
from neural_memory.stores.find import Find

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from neural_memory.models import ObservationRecord
    from neural_memory.service import Service

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


# A record's identifiers: by field, the name a redaction records (the wire's).
_IDENTIFIERS = {
    "id": "id", "parent_id": "parentId", "superseded_by": "supersededBy", "session_id": "sessionId",
    "actor_name": "actorName", "source": "source", "source_type": "sourceType",
    "observation_type": "observationType", "promoted_by": "promotedBy",
}  # fmt: skip


def _redact_identifiers(record: ObservationRecord, update: dict[str, object], found: list[str]) -> None:
    for name, wire in _IDENTIFIERS.items():
        value = getattr(record, name)
        if value:
            text, kinds = redact_identifier(value, slug=name not in {*FREE_TEXT_IDENTIFIERS, "promoted_by"})
            if kinds:
                update[name] = text
                found += [f"{wire}:{kind}" for kind in kinds]
    if record.supersedes:
        ids = [redact_identifier(value)[0] for value in record.supersedes]
        if ids != record.supersedes:
            update["supersedes"] = ids
            found.append("supersedes:identifier")


def redact_record(record: ObservationRecord) -> ObservationRecord | None:
    """The record with its stored text and identifiers redacted (title, content, URL, metadata,
    code refs, the promotion's reason, ``_IDENTIFIERS``), its hashes recomputed and ``redactions``
    added to; None if it held nothing."""
    found: list[str] = []
    update: dict[str, object] = {}
    _redact_identifiers(record, update, found)
    for name in ("title", "content", "url", "promotion_reason"):
        value = getattr(record, name)
        if value:
            text, kinds = redact_text(value)
            if kinds:
                update[name] = text
                found += [f"{name}:{kind}" for kind in kinds]
    if record.metadata:
        metadata, kinds = redact_metadata(record.metadata)
        if kinds:
            update["metadata"] = metadata
            found += kinds
    if record.code_refs:
        refs = []
        for ref in record.code_refs:
            text, kinds = redact_text(ref)
            refs.append(text)
            found += [f"codeRefs:{kind}" for kind in kinds]
        if refs != record.code_refs:
            update["code_refs"] = refs
    if not found:
        return None
    redacted = record.model_copy(update=update)
    title, content, url = redacted.title, redacted.content, redacted.url
    stamps: dict[str, object] = {
        "content_hash": indexed_hash(title, content, url, redacted.tier, redacted.metadata),
        "redactions": list(dict.fromkeys([*(record.redactions or []), *found])),
    }
    if record.recurrence_key is not None:
        stamps["recurrence_key"] = recurrence_key(title, content)
    return redacted.model_copy(update=stamps)


class Scrub:
    """One scrub over a service's store (``run``), from a cursor, until done or a deadline."""

    def __init__(self, service: Service, clock: Callable[[], datetime]) -> None:
        self._service = service
        self._clock = clock

    def workspaces(self) -> dict[str, int]:
        """Every workspace and how many records it holds."""
        return self._service.store.count(None, by="workspace_id")

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
        store = self._service.store
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
        service = self._service
        report.scanned += len(page)
        pairs = [(record, changed) for record in page if (changed := redact_record(record)) is not None]
        if not pairs:
            return
        now = self._clock()
        items = [chunked(changed, service.chunking, now) for _, changed in pairs]
        turns_before = service.settings.turn_context
        if turns_before and service.embedder is not None:
            earlier = service.earlier_turn(workspace_id)
            add_stored_turn_context(items, earlier, turns_before)
        service.embed_chunks(workspace_id, items)
        # Re-keyed (an id that held a secret): the derived id must be absent, the original is deleted after.
        expected = {
            changed.id: lifecycle_state(record if changed.id == record.id else None) for record, changed in pairs
        }
        outcome = service.store.write(workspace_id, items, expected)
        missed = set(outcome.stale) | set(outcome.failed)
        written = [changed for _, changed in pairs if changed.id not in missed]
        for record, changed in pairs:
            if changed.id != record.id and changed.id not in missed:
                service.store.delete(workspace_id, record.id)
        report.redacted += len(written)
        report.raced += len(missed)
        service.recut_turns_quoting(workspace_id, written)
