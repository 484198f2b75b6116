"""Reindex: build a new physical index for the configured embedding model (or a new mapping) from
the stored records while the old index keeps answering, then swap it in behind the alias.

The old index is the source of truth until the swap: every observation is read back from it in
(workspace, id) order, cut into chunks with today's settings, embedded by the service's embedder
in batches (not the text whose vector for this model either index already stores:
``stored_vectors``) and written to the new index; the cursor is saved as it goes, so a reindex that is
stopped (Ctrl-C, a Lambda deadline) resumes where it stopped. One run works on a reindex at a
time: it holds a claim (a lease in the new index's ``_meta``) and checks it, and where the alias
points, before every batch.

Writes keep going to the alias meanwhile, so before the swap the reindex catches up: what was
written to the old index since it started is copied again (with what it supersedes or no longer
supersedes, and what names a path it names: whose marks it changed), refused observations are
tried again, and what the old index no longer holds is deleted. The alias does not move while any
observation is refused (unless forced). After the swap, writes that raced it are caught up once
more, without comparing clocks: an observation the live index holds in a newer version is kept,
one deleted from it after the swap is not brought back, one deleted from the old index just
before the swap is deleted. The deploy's index step runs it (``index_bootstrap.py``)."""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Protocol

from neural_memory.clock import from_iso, to_iso, to_ms, utcnow
from neural_memory.engineering.staleness import referencing
from neural_memory.ingest.lifecycle import with_recurrence_key
from neural_memory.ingest.prepare import chunked
from neural_memory.ingest.turn_context import add_stored_turn_context, previous_in_session
from neural_memory.stores.opensearch.index import space_of
from neural_memory.stores.opensearch.scan import scan, written
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.opensearch.stored_vectors import StoredVectors

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from neural_memory.domain.chunking import Chunking
    from neural_memory.models import ObservationRecord
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.providers.embeddings.vector_cache import VectorCache
    from neural_memory.settings import Settings
    from neural_memory.stores.base import IndexedObservation, Store
    from neural_memory.stores.opensearch.index import OpenSearchAdmin, ReindexState

BATCH = 100
SAVE_EVERY_S = 10.0  # progress (and the claim) written at most this often: each write is a mapping update
# ``ingested_at`` is stamped by the writer's clock (another Lambda's, or another machine's): the
# catch-up looks this much further back than its own clock says, so a skewed clock loses nothing.
CLOCK_SKEW = timedelta(minutes=5)


class Embeds(Protocol):
    """What a reindex embeds with (``Service`` is one): the embedder, how content is cut, the settings, the store."""

    @property
    def embedder(self) -> Embedder | None: ...
    @property
    def chunking(self) -> Chunking: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def store(self) -> Store: ...
    def embed_chunks(
        self, workspace_id: str, items: Sequence[IndexedObservation], cache: VectorCache | None = None
    ) -> None: ...


Key = tuple[str, str]  # (workspace, observation id)
Records = list[tuple[str, "ObservationRecord"]]


@dataclass
class ReindexReport:
    """What a reindex run did. ``swapped`` is False when it stopped at its deadline (run it again
    to resume), had nothing to do (``source`` is None), or was held back (``held``: why)."""

    source: str | None = None
    target: str | None = None
    copied: int = 0
    total: int = 0
    caught_up: int = 0
    removed: int = 0
    swapped: bool = False
    held: str | None = None
    failed: dict[Key, str] = field(default_factory=dict)

    def summary(self) -> str:
        """One line for a person (the CLI, the maintenance function's log and CloudFormation)."""
        if self.source is None:
            return self.held or "the live index already fits this model and mapping: nothing to reindex"
        state = "swapped in" if self.swapped else f"not swapped: {self.held or 'run again to resume'}"
        failed = ""
        if self.failed:
            (workspace, observation), reason = next(iter(self.failed.items()))
            failed = f", {len(self.failed)} refused (first: {workspace}/{observation}: {reason})"
        return (
            f"{self.source} -> {self.target}: {self.copied}/{self.total} observations copied, "
            f"{self.caught_up} caught up, {self.removed} removed{failed}; {state}"
        )


class _Deadline(Exception):
    pass


class Reindexer:
    """Rebuilds the index behind ``admin``'s alias for ``service``'s embedder."""

    def __init__(
        self,
        service: Embeds,
        admin: OpenSearchAdmin,
        batch_size: int = BATCH,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._service = service
        self._admin = admin
        self._batch = batch_size
        self._clock = clock
        self._owner = uuid.uuid4().hex
        self._deadline: float | None = None
        self._saved_at = 0.0
        self._vectors: StoredVectors | None = None

    def run(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        deadline: float | None = None,
        force: bool = False,
    ) -> ReindexReport:
        """Copy, catch up, swap, catch up. ``progress(copied, total)`` after every batch;
        ``deadline`` (a ``time.monotonic()`` value) stops between batches with the progress
        saved; ``force`` swaps even though some observations were refused (they are listed).
        ``ReindexBusy`` if another run holds the reindex."""
        state = self._admin.begin_reindex(*space_of(self._service.embedder), self._clock())
        if state is None:
            return ReindexReport()
        self._deadline = deadline
        report = ReindexReport(source=state.source, target=state.target, total=self._total(state.source))
        self._admin.claim(state, self._owner, self._clock())
        source, target = self._store(state.source), self._store(state.target)
        # Unchanged text keeps its vector: found in the old index, or in the new one when the
        # catch-up copies an observation again
        self._vectors = StoredVectors(source, target)
        try:
            if state.phase == "copy":
                self._copy_all(state, source, target, report, progress)
                self._catch_up(state, source, target, report)
                if state.failed and not force:
                    report.held = f"{len(state.failed)} observations refused: delete or fix them, or force the swap"
                    self._admin.release(state)
                    return self._reported(report, state)
                snapshot = self._swap(state, source, target, report)
                report.swapped = True
            else:  # interrupted right after its swap: what raced it, without the snapshot
                snapshot = None
                report.swapped = True
            if state.source != self._admin.alias:  # a pre-versioning index is gone with the swap
                self._after_swap(state, source, target, report, snapshot)
        except _Deadline:
            self._admin.release(state)
            return self._reported(report, state)
        except KeyboardInterrupt:  # Ctrl-C: keep the progress made since the last save
            self._admin.release(state)
            raise
        self._admin.finish(state)
        return self._reported(report, state)

    @staticmethod
    def _reported(report: ReindexReport, state: ReindexState) -> ReindexReport:
        report.copied, report.failed = state.copied, dict(state.failed)
        return report

    def _store(self, index: str) -> OpenSearchStore:
        # No refresh per bulk request (the copy is many of them): refreshed before it is read back.
        return OpenSearchStore(self._admin.client, index, refresh="false", single_index=True)

    def _total(self, index: str) -> int:
        query = {"bool": {"filter": [{"term": {"chunk_no": 0}}]}}
        return int(self._admin.client.count(index=index, body={"query": query})["count"])

    def _step(self, state: ReindexState, *, force_save: bool = False) -> None:
        """Between batches: stop at the deadline, save progress now and then (renewing the
        claim), and make sure the claim and the alias are still as this run left them."""
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise _Deadline
        if force_save or time.monotonic() - self._saved_at >= SAVE_EVERY_S:
            self._admin.claim(state, self._owner, self._clock())
            self._saved_at = time.monotonic()
        else:
            self._admin.check(state, self._owner)

    # ------------------------------------------------------------------ copy

    def _copy_all(
        self,
        state: ReindexState,
        source: OpenSearchStore,
        target: OpenSearchStore,
        report: ReindexReport,
        progress: Callable[[int, int], None] | None,
    ) -> None:
        if state.copied_all:  # resumed after the copy, or a return to the index it replaced
            return
        while True:
            self._step(state)
            batch = scan(source, state.cursor, self._batch)
            if not batch:
                break
            state.failed |= self._write(target, batch)
            state.cursor = [batch[-1][0], batch[-1][1].id]
            state.copied += len(batch)
            if progress is not None:
                progress(state.copied, report.total)
        state.copied_all = True
        self._step(state, force_save=True)

    def _write(self, target: OpenSearchStore, records: Iterable[tuple[str, ObservationRecord]]) -> dict[Key, str]:
        """Chunk, embed and write ``records`` to the target; the refused ones with the reason."""
        by_workspace: dict[str, list[ObservationRecord]] = {}
        for workspace_id, record in records:
            by_workspace.setdefault(workspace_id, []).append(record)
        failed: dict[Key, str] = {}
        for workspace_id, batch in by_workspace.items():
            items = [chunked(with_recurrence_key(record), self._service.chunking) for record in batch]
            if self._service.settings.turn_context:  # the chat turns' context chunks, as ingest wrote them
                earlier = partial(previous_in_session, self._service.store, workspace_id)
                add_stored_turn_context(items, earlier, self._service.settings.turn_context)
            self._service.embed_chunks(workspace_id, items, self._vectors)
            outcome = target.write(workspace_id, items)
            failed |= {(workspace_id, i): reason for i, reason in outcome.failed.items()}
        return failed

    # ------------------------------------------------------------------ catch-up before the swap

    def _catch_up(
        self, state: ReindexState, source: OpenSearchStore, target: OpenSearchStore, report: ReindexReport
    ) -> None:
        """Copy what the old index changed since the last complete catch-up (or the start), try
        the refused ones again, delete what it no longer holds; page by page, deadline-checked."""
        round_start = self._clock()
        since = from_iso(state.caught_up_to or state.started_at) - CLOCK_SKEW
        self._admin.refresh(state.source)
        self._admin.refresh(state.target)
        for page in self._changed(source, since):
            self._step(state)
            older = self._records(target, _keys(page))
            linked = self._linked(page, older) | self._sharing_code(source, page + older)
            records = page + self._records(source, linked)
            state.failed = {k: v for k, v in state.failed.items() if k not in _keys(records)}
            state.failed |= self._write(target, records)
            report.caught_up += len(records)
        if state.failed:  # tried again: what still fails stays listed
            retried = self._records(source, set(state.failed))
            state.failed = self._write(target, retried)
            report.caught_up += len(retried)
        self._admin.refresh(state.target)
        gone = [key for key, _ in _only_in(written(target), written(source))]
        report.removed += self._delete(state, source, target, gone)
        state.caught_up_to = to_iso(round_start)
        self._step(state, force_save=True)

    def _changed(self, source: OpenSearchStore, since: datetime) -> Iterator[Records]:
        after: list[str] | None = None
        while page := scan(source, after, self._batch, since=since):
            yield page
            after = [page[-1][0], page[-1][1].id]

    @staticmethod
    def _linked(records: Records, older: Records) -> set[Key]:
        """The observations whose supersession marks these records may have changed: the ones
        they supersede, and the ones their ``older`` versions (the target's) superseded."""
        return {(w, s) for w, r in records + older for s in r.supersedes or []} - _keys(records)

    def _sharing_code(self, source: OpenSearchStore, records: Records) -> set[Key]:
        """The observations whose staleness marks these records may have changed: those naming a
        path they name (``engineering.staleness``; a push marks, a rewritten note is marked)."""
        refs: dict[str, set[str]] = {}
        for workspace_id, record in records:
            refs.setdefault(workspace_id, set()).update(record.code_refs or ())
        found = {
            (workspace_id, holder.id)
            for workspace_id, named in refs.items()
            if named
            for holder in referencing(source, workspace_id, sorted(named), self._clock())
        }
        return found - _keys(records)

    @staticmethod
    def _records(store: OpenSearchStore, keys: set[Key]) -> Records:
        return [(w, r) for w, ids in _by_workspace(keys).items() for r in store.read(w, ids).values()]

    def _delete(self, state: ReindexState, source: OpenSearchStore, target: OpenSearchStore, gone: list[Key]) -> int:
        """Delete ``gone`` from the target, and copy again what they superseded (now current) and
        what names their paths (its staleness mark recomputed)."""
        if not gone:
            return 0
        going = self._records(target, set(gone))
        linked = {(w, s) for w, r in going for s in r.supersedes or []} | self._sharing_code(source, going)
        for workspace_id, observation_id in gone:
            target.delete(workspace_id, observation_id)
            state.failed.pop((workspace_id, observation_id), None)
        state.failed |= self._write(target, self._records(source, linked - set(gone)))
        return len(gone)

    # ------------------------------------------------------------------ the swap

    def _swap(
        self, state: ReindexState, source: OpenSearchStore, target: OpenSearchStore, report: ReindexReport
    ) -> dict[int, int]:
        """Move the alias; returns what the target held just before (for the catch-up after it:
        ``_digest`` of each key → when it was written, in ms).
        A pre-versioning index is removed by the swap, so its writes are stopped first and its
        last changes caught up while they are (writers retry a refused write)."""
        self._admin.check(state, self._owner)
        if state.source == self._admin.alias:
            self._admin.block_writes(state.source, blocked=True)
            try:
                self._catch_up(state, source, target, report)
            except BaseException:  # stopped (deadline, Ctrl-C, error): the index takes writes again
                self._admin.block_writes(state.source, blocked=False)
                raise
        snapshot = {_digest(key): to_ms(written) for key, written in written(target)}
        state.swapped_at = to_iso(self._clock())  # when the source stopped taking writes
        self._admin.swap(state)
        return snapshot

    def _after_swap(
        self,
        state: ReindexState,
        source: OpenSearchStore,
        target: OpenSearchStore,
        report: ReindexReport,
        snapshot: dict[int, int] | None,
    ) -> None:
        """Catch up the writes that reached the old index between the last catch-up and the swap.
        Without the snapshot (a run interrupted at the swap), deletions in that window are not
        replayed and an observation missing from the live index is copied back."""
        since = from_iso(state.caught_up_to or state.started_at) - CLOCK_SKEW
        self._admin.refresh(state.source)  # writes applied just before the swap
        for page in self._changed(source, since):
            self._step(state)
            linked = self._records(source, self._linked(page, self._records(target, _keys(page))))
            candidates = page + linked
            # Read just before the write: the live index may have taken a newer version meanwhile
            live = {(w, r.id): r for w, r in self._records(target, _keys(candidates))}
            newer = [
                (w, r)
                for w, r in candidates
                if ((w, r.id) not in live and (snapshot is None or _digest((w, r.id)) not in snapshot))
                or ((w, r.id) in live and live[(w, r.id)].ingested_at < r.ingested_at)
            ]
            self._write(target, newer)
            report.caught_up += len(newer)
        if snapshot is not None:
            # Deleted from the old index just before the swap: in the new one as it was then
            self._admin.refresh(state.target)
            gone = [
                key
                for key, written in _only_in(written(target), written(source))
                if snapshot.get(_digest(key)) == to_ms(written)
            ]
            report.removed += self._delete(state, source, target, gone)


def _only_in(
    ours: Iterator[tuple[Key, datetime]], theirs: Iterator[tuple[Key, datetime]]
) -> Iterator[tuple[Key, datetime]]:
    """The entries of ``ours`` whose key ``theirs`` lacks: both are in key order (the indices'
    (workspace, id) sort, UTF-8 byte order = code point order), merged a page at a time."""
    other = next(theirs, None)
    for key, at in ours:
        while other is not None and other[0] < key:
            other = next(theirs, None)
        if other is None or other[0] != key:
            yield key, at


def _digest(key: Key) -> int:
    """A key in 8 bytes: the snapshot of a large index stays small (a collision is ~2^-64)."""
    return int.from_bytes(hashlib.blake2b("\x00".join(key).encode(), digest_size=8).digest(), "big")


def _keys(records: Records) -> set[Key]:
    return {(w, r.id) for w, r in records}


def _by_workspace(keys: Iterable[Key]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for workspace_id, observation_id in sorted(keys):
        grouped.setdefault(workspace_id, []).append(observation_id)
    return grouped
