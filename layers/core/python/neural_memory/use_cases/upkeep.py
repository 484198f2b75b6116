"""Upkeep, across workspaces (the daily maintenance, ``purge``): expired observations purged,
old E archived, and the vectors of what is no longer embedded dropped (``ingest/lifecycle.py``
holds each step over the port; this holds their order and what follows a purge)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from neural_memory.audit.trail import entry
from neural_memory.auth.roles import OPERATOR
from neural_memory.domain.record_rules import lifecycle_state
from neural_memory.ingest import lifecycle, supersession
from neural_memory.ingest.prepare import chunked

if TYPE_CHECKING:
    from datetime import datetime

    from neural_memory.audit.trail import AuditLog
    from neural_memory.auth.roles import Caller
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store
    from neural_memory.use_cases.chat_turns import ChatTurns
    from neural_memory.use_cases.embedding import Embedding

UNEMBED_BATCH = 500  # observations the maintenance reads and writes again at a time


@dataclass(frozen=True)
class Upkeep:
    """The maintenance of one store (every workspace in it), at the ``now`` each call is given."""

    store: Store
    embedding: Embedding
    turns: ChatTurns
    settings: Settings
    audit: AuditLog | None = None

    def maintain(self, now: datetime, caller: Caller = OPERATOR) -> dict[str, int]:
        """The daily maintenance: archive old E observations; C past their window lose their
        vectors (and are deleted instead under ``collaborative_after_window = "delete"``), archived
        E lose the vectors their recurrence gave them."""
        purged = self.purge_expired(now, caller) if self.settings.collaborative_after_window == "delete" else 0
        archived = self.archive_execution(now)
        return {"purged": purged, "archived": archived, "unembedded": self.unembed_due(now)}

    def purge_expired(self, now: datetime, caller: Caller = OPERATOR) -> int:
        """Delete every expired observation (all workspaces); what they superseded is current
        again, and the turns whose context quoted a purged chat turn are cut again without it.
        Each workspace's audit trail counts what went (the purge deletes by condition: no ids).
        Returns how many went."""
        released = supersession.expiring_links(self.store, now)
        turns = self.turns.expiring(now)
        by_workspace = lifecycle.purge_expired_by_workspace(self.store, now)
        purged = sum(by_workspace.values())
        for workspace_id, count in by_workspace.items():
            if self.audit is not None and count:
                self.audit.record(workspace_id, [entry(caller.name, "purge", [], count=count)])
        for workspace_id, targets in released.items():
            supersession.unmark_deleted(self.store, workspace_id, sorted(set(targets)))
        for workspace_id, records in turns.items():
            self.turns.recut_turns_quoting(workspace_id, records)
        return purged

    def archive_execution(self, now: datetime) -> int:
        """Archive the E observations (all workspaces) that occurred ``archive_execution_after_days``
        ago or more (0: never); returns how many were archived now."""
        days = self.settings.archive_execution_after_days
        if not days:
            return 0
        return lifecycle.archive_execution(self.store, now - timedelta(days=days), now)

    def unembed_due(self, now: datetime) -> int:
        """Drop the vectors of the observations no longer embedded at ``now`` (``tiers.embeds``:
        C past its window, E archived): each is written again with lexical chunks only, if its
        lifecycle state is still the one read. Returns how many."""
        done, seen = 0, set[tuple[str, str]]()
        while due := lifecycle.vectors_due(self.store, now, UNEMBED_BATCH):
            fresh = {(workspace_id, i) for workspace_id, ids in due.items() for i in ids} - seen
            if not fresh:  # nothing written since the last round: leave the rest to the next run
                break
            seen |= fresh
            for workspace_id, ids in due.items():
                records = self.store.read(workspace_id, ids)
                items = [chunked(record, self.embedding.chunking, now) for record in records.values()]
                expected = {record.id: lifecycle_state(record) for record in records.values()}
                outcome = self.store.write(workspace_id, items, expected)
                done += len(items) - len(outcome.stale) - len(outcome.failed)
        return done
