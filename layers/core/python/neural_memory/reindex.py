"""Reindex: build a new physical index for the configured embedding model (or a new mapping) from
the stored records while the old index keeps answering, then swap it in behind the alias.

The old index is the source of truth until the swap: every observation is read back from it in
(workspace, id) order, cut into chunks with today's settings, embedded by the service's embedder
in batches and written to the new index; the cursor is saved after each batch, so a reindex that
is stopped (Ctrl-C, a Lambda deadline) resumes where it stopped. Writes keep going to the alias
meanwhile, so before the swap the reindex catches up: observations written to the old index since
it started are copied again (with what they supersede, whose marks they changed) and deleted ones
are deleted. The same catch-up runs once after the swap for writes that raced it, never
overwriting an observation that the new index already holds in a newer version.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from neural_memory.clock import utcnow
from neural_memory.ingest.prepare import chunked
from neural_memory.stores.opensearch import OpenSearchStore
from neural_memory.stores.opensearch_index import space_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from neural_memory.models import ObservationRecord
    from neural_memory.service import Service
    from neural_memory.stores.opensearch_index import OpenSearchAdmin

BATCH = 100
# The event of the maintenance schedule that resumes a reindex a deploy could not finish.
RESUME_EVENT = {"action": "reindex"}
# ``ingested_at`` is stamped by the writer's clock (another Lambda's, or another machine's): the
# catch-up looks this much further back than its own clock says, so a skewed clock loses nothing.
CLOCK_SKEW = timedelta(minutes=5)


@dataclass
class ReindexReport:
    """What a reindex run did; ``swapped`` is False when it stopped at its deadline (run it again
    to resume) or had nothing to do (``source`` is then None)."""

    source: str | None = None
    target: str | None = None
    copied: int = 0
    total: int = 0
    caught_up: int = 0
    removed: int = 0
    swapped: bool = False
    failed: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        """One line for a person (the CLI, the maintenance function's log)."""
        if self.source is None:
            return "the live index already fits this model and mapping: nothing to reindex"
        state = "swapped in" if self.swapped else "not swapped yet (run again to resume)"
        failed = f", {len(self.failed)} refused (first: {next(iter(self.failed.items()))})" if self.failed else ""
        return (
            f"{self.source} -> {self.target}: {self.copied}/{self.total} observations copied, "
            f"{self.caught_up} caught up, {self.removed} removed{failed}; {state}"
        )


class Reindexer:
    """Rebuilds the index behind ``admin``'s alias for ``service``'s embedder."""

    def __init__(
        self,
        service: Service,
        admin: OpenSearchAdmin,
        batch_size: int = BATCH,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._service = service
        self._admin = admin
        self._batch = batch_size
        self._clock = clock

    def run(
        self, *, progress: Callable[[int, int], None] | None = None, deadline: float | None = None
    ) -> ReindexReport:
        """Copy, catch up, swap, catch up. ``progress(copied, total)`` after every batch;
        ``deadline`` (a ``time.monotonic()`` value) stops between batches, progress saved."""
        state = self._admin.begin_reindex(*space_of(self._service.embedder), self._clock())
        if state is None:
            return ReindexReport()
        source, target = self._store(state.source), self._store(state.target)
        report = ReindexReport(source=state.source, target=state.target, total=self._total(state.source))
        while True:
            if deadline is not None and time.monotonic() > deadline:
                report.copied, report.failed = state.copied, dict(state.failed)
                return report
            batch = source.scan(state.cursor, self._batch)
            if not batch:
                break
            state.failed |= self._copy(target, batch)
            state.cursor = [batch[-1][0], batch[-1][1].id]
            state.copied += len(batch)
            self._admin.save_progress(state)
            if progress is not None:
                progress(state.copied, report.total)
        report.copied, report.failed = state.copied, dict(state.failed)
        caught_up_from = self._clock()
        since = datetime.fromisoformat(state.started_at) - CLOCK_SKEW
        self._admin.refresh(state.target)  # the catch-up reads back what the copy wrote
        report.caught_up, report.removed = self._catch_up(source, target, report, since=since, swapped_at=None)
        self._admin.refresh(state.target)
        swapped_at = self._clock()
        self._admin.swap(state)
        report.swapped = True
        since = caught_up_from - CLOCK_SKEW
        more, gone = self._catch_up(source, target, report, since=since, swapped_at=swapped_at)
        report.caught_up += more
        report.removed += gone
        return report

    def _store(self, index: str) -> OpenSearchStore:
        # No refresh per bulk request (the copy is many of them): refreshed before it is read back.
        return OpenSearchStore(self._admin.client, index, refresh="false")

    def _total(self, index: str) -> int:
        query = {"bool": {"filter": [{"term": {"chunk_no": 0}}]}}
        return int(self._admin.client.count(index=index, body={"query": query})["count"])

    def _copy(self, target: OpenSearchStore, records: Iterable[tuple[str, ObservationRecord]]) -> dict[str, str]:
        """Chunk, embed and write ``records`` to the target; the refused ones with the reason."""
        settings = self._service.settings
        by_workspace: dict[str, list[ObservationRecord]] = {}
        for workspace_id, record in records:
            by_workspace.setdefault(workspace_id, []).append(record)
        failed: dict[str, str] = {}
        for workspace_id, batch in by_workspace.items():
            items = [chunked(record, settings.chunk_tokens, settings.chunk_overlap) for record in batch]
            self._service.embed_chunks(workspace_id, items)
            outcome = target.upsert(workspace_id, items)
            failed |= {f"{workspace_id}/{i}": reason for i, reason in outcome.failed.items()}
        return failed

    def _catch_up(
        self,
        source: OpenSearchStore,
        target: OpenSearchStore,
        report: ReindexReport,
        *,
        since: datetime,
        swapped_at: datetime | None,
    ) -> tuple[int, int]:
        """Copy again what was written to the source since ``since`` (and what it supersedes), and
        delete from the target what the source no longer has. After the swap (``swapped_at``) the
        target is live: an observation it holds in a newer version than the source's is kept, and
        one written to it after the swap is not deleted. Returns (copied, deleted)."""
        changed: list[tuple[str, ObservationRecord]] = []
        after: list[str] | None = None
        while page := source.scan(after, BATCH, since=since):
            changed += page
            after = [page[-1][0], page[-1][1].id]
        in_source, in_target = source.written_at(), target.written_at()
        gone = [
            key
            for key, written in in_target.items()
            if key not in in_source and (swapped_at is None or written < swapped_at)
        ]
        linked: dict[str, set[str]] = {}
        for workspace_id, record in changed:
            linked.setdefault(workspace_id, set()).update(record.supersedes or [])
        for workspace_id, observation_id in gone:
            old = target.get(workspace_id, observation_id)
            linked.setdefault(workspace_id, set()).update((old.supersedes or []) if old else [])
        known = {(w, r.id) for w, r in changed}
        for workspace_id, ids in linked.items():
            extra = source.get_many(workspace_id, sorted(ids))
            changed += [(workspace_id, r) for i, r in extra.items() if (workspace_id, i) not in known]
        if swapped_at is not None:
            changed = [
                (w, r)
                for w, r in changed
                if in_target.get((w, r.id)) is None or in_target[(w, r.id)] <= in_source.get((w, r.id), r.ingested_at)
            ]
        report.failed |= self._copy(target, changed)
        for workspace_id, observation_id in gone:
            target.delete(workspace_id, observation_id)
        return len(changed), len(gone)


def bootstrap(service: Service, *, deadline: float | None = None) -> str:
    """The index step of a deploy (and of the maintenance schedule): create or verify the index;
    when the live index was built for another model or mapping, reindex (resuming a reindex in
    progress) until ``deadline``. Returns what was done."""
    from neural_memory.stores import build_admin

    admin = build_admin(service.settings)
    if admin is None:
        return "ok"
    space = space_of(service.embedder)
    if admin.live() is not None and admin.needs_reindex(*space):
        return Reindexer(service, admin).run(deadline=deadline).summary()
    return admin.ensure_index(*space)
