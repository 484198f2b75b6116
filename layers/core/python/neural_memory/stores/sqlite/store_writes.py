"""The embedded store's writes (``SqliteStore`` is this class with its reads): each write,
delete and patch is one transaction (``BEGIN IMMEDIATE``: the writers of every process take
turns), committed and applied to this process's in-memory mirror as one step for its searches.
A mirror that missed another process's write is dropped, and reloaded by the next search."""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

from neural_memory.domain.record_rules import MIRRORED_FIELDS
from neural_memory.models import UpsertOutcome
from neural_memory.observability import logger
from neural_memory.stores.base import IndexedObservation, Patched, check_patched, holds
from neural_memory.stores.find import Find, Matching
from neural_memory.stores.sqlite.db import bump_generation, rollback
from neural_memory.stores.sqlite.fts import Tokenizer
from neural_memory.stores.sqlite.mirror_sql import chunk_rows, restated
from neural_memory.stores.sqlite.partitions import PARTITION_FROM
from neural_memory.stores.sqlite.rows import (
    BY_NAME,
    delete_rows,
    pks_by_id,
    records_by_id,
    target_rows,
    write_chunks,
    write_record,
)

if TYPE_CHECKING:
    import sqlite3
    import threading
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from neural_memory.stores.sqlite.files import LazyConnection
    from neural_memory.stores.sqlite.lock import ReadWriteLock
    from neural_memory.stores.sqlite.mirror import ChunkMirror
    from neural_memory.stores.sqlite.store_model import StoreModel


class SqliteStoreWrites:
    """The writes of ``SqliteStore``, over the connection, locks, mirror and model it sets up.
    Writes in this process take turns (``_write_lock``); a write holds the mirror alone only while
    it commits and applies itself, so a search never waits for a batch being written."""

    _db: LazyConnection
    _write_lock: threading.Lock
    _mirror_lock: ReadWriteLock
    _mirror: ChunkMirror | None
    _tokenizer_: Tokenizer | None
    _model: StoreModel

    @property
    def _conn(self) -> sqlite3.Connection:
        """The connection writes go through (callers hold ``_write_lock``)."""
        return self._db.get()

    @property
    def _tokenizer(self) -> Tokenizer:
        if self._tokenizer_ is None:
            self._tokenizer_ = Tokenizer(self._conn)
        return self._tokenizer_

    def write(
        self,
        workspace_id: str,
        items: Sequence[IndexedObservation],
        expected: Mapping[str, Mapping[str, object] | None] | None = None,
    ) -> UpsertOutcome:
        """Insert or replace each observation and its chunks in one transaction; with
        ``expected``, those whose stored record changed are left out (``stale``), read
        inside the transaction (``BEGIN IMMEDIATE``: no writer of any process in between)."""
        outcome = UpsertOutcome()
        # What the mirror must forget (chunks that existed before this batch) and the chunks alive
        # after it. A batch may repeat an id: its second write deletes chunks the first wrote, and
        # SQLite may give the new chunks those very rowids, so both are tracked by rowid, in order.
        removed: set[int] = set()
        alive: dict[int, tuple[IndexedObservation, int]] = {}
        with self._write_lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                if expected:
                    current = records_by_id(conn, workspace_id, list(expected))
                    outcome.stale = [i for i, state in expected.items() if not holds(current.get(i), state)]
                    items = [item for item in items if item.record.id not in outcome.stale]
                    if not items:  # nothing to write: no new generation, no mirror reloaded anywhere
                        conn.execute("ROLLBACK")
                        return outcome
                self._model.claim(conn, items)
                # One read of the batch's stored pks rather than one per item; a repeated id finds
                # the row its first occurrence wrote.
                pks = pks_by_id(conn, workspace_id, {item.record.id for item in items})
                for item in items:
                    pk, old_chunks = write_record(conn, workspace_id, item, pks.get(item.record.id))
                    pks[item.record.id] = pk
                    outcome.ids.append(item.record.id)
                    (outcome.updated if old_chunks is not None else outcome.created).append(item.record.id)
                    for rowid in old_chunks or ():
                        if alive.pop(rowid, None) is None:
                            removed.add(rowid)
                    alive.update((rowid, (item, n)) for n, rowid in enumerate(write_chunks(conn, pk, item)))
                generation = bump_generation(conn)
                self._commit(conn, generation, workspace_id, removed, [(r, *where) for r, where in alive.items()])
            except BaseException:
                rollback(conn)
                raise
        return outcome

    def _commit(
        self,
        conn: sqlite3.Connection,
        generation: int,
        workspace_id: str,
        removed: Iterable[int],
        written: Sequence[tuple[int, IndexedObservation, int]],
        change: Callable[[ChunkMirror], None] | None = None,
    ) -> None:
        """Commit and apply the write to the mirror as one step for searches in this process
        (the new rows are tokenized first, so searches wait only for the commit itself);
        ``change`` restates rows the write changed in place (a promotion, an archive)."""
        tokens = self._tokens(written) if self._mirror is not None else None
        with self._mirror_lock.writing():
            conn.execute("COMMIT")
            try:
                self._sync_mirror(generation, workspace_id, removed, written, tokens, change)
            except Exception:  # committed: the write stands, whatever the mirror; it is rebuilt on next use
                logger.exception("the in-memory index missed a committed write; rebuilding it on next use")
                self._mirror = None

    def _sync_mirror(
        self,
        generation: int,
        workspace_id: str,
        removed: Iterable[int],
        written: Sequence[tuple[int, IndexedObservation, int]],
        tokens: Sequence[tuple[dict[str, float], int]] | None,
        change: Callable[[ChunkMirror], None] | None = None,
    ) -> None:
        """Apply our own committed write to the mirror, or drop a mirror that missed another
        process's write (it reloads on next use)."""
        mirror = self._mirror
        if mirror is None:
            return
        if mirror.generation != generation - 1:
            self._mirror = None
            return
        mirror.remove(removed)
        if tokens is None:  # the mirror was loaded while this write was being made
            tokens = self._tokens(written)
        mirror.add(chunk_rows(mirror, workspace_id, written, tokens))
        if change is not None:
            change(mirror)
        mirror.generation = generation
        mirror.partition_if_large(PARTITION_FROM)  # once, when the store grows past it

    def _tokens(self, written: Sequence[tuple[int, IndexedObservation, int]]) -> list[tuple[dict[str, float], int]]:
        lexical = [(item.record.title, item.chunks[n].text) for _, item, n in written if item.chunks[n].lexical]
        tokens = iter(self._tokenizer.rows(lexical))
        return [next(tokens) if item.chunks[n].lexical else ({}, 0) for _, item, n in written]

    @overload
    def delete(self, workspace_id: str, target: str) -> bool: ...

    @overload
    def delete(self, workspace_id: str, target: Find) -> int: ...

    def delete(self, workspace_id: str, target: str | Find) -> bool | int:
        """Delete the observation (by id) or the records a ``Find`` matches, with their chunks,
        in one transaction: whether the one named was there, or how many went."""
        with self._write_lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                pks = [pk for pk, _ in target_rows(conn, workspace_id, target)]
                if not pks:  # nothing to delete: no new generation, no mirror reloaded anywhere
                    conn.execute("ROLLBACK")
                    return False if isinstance(target, str) else 0
                chunks = delete_rows(conn, pks)
                generation = bump_generation(conn)
                self._commit(conn, generation, workspace_id, chunks, [])
            except BaseException:
                rollback(conn)
                raise
        return True if isinstance(target, str) else len(pks)

    def patch(
        self,
        workspace_id: str,
        changes: Mapping[str, Mapping[str, object]] | Matching,
        expected: Mapping[str, Mapping[str, object]] | None = None,
    ) -> Patched:
        """Set (or clear, with None) ``PATCHED_FIELDS`` in one transaction, ``expected`` read
        inside it (``BEGIN IMMEDIATE``: the writers of every process take turns): one statement
        per set of fields. The mirror restates the tier, expiry and archive of the chunks of
        records whose ``MIRRORED_FIELDS`` changed; a patch of citations alone bumps no
        generation (the mirror holds no count, so searches of other processes keep theirs)."""
        outcome = Patched()
        with self._write_lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                if isinstance(changes, Matching):
                    found = target_rows(conn, workspace_id, changes.find)
                    by_id: dict[str, Mapping[str, object]] = {i: changes.fields for _, i in found}
                    pks = {i: pk for pk, i in found}
                else:
                    by_id = dict(changes)
                    pks = pks_by_id(conn, workspace_id, by_id)
                if expected:
                    current = records_by_id(conn, workspace_id, [i for i in expected if i in pks])
                    for i, values in expected.items():
                        if (record := current.get(i)) is not None and any(
                            getattr(record, name) != value for name, value in values.items()
                        ):
                            outcome.changed[i] = record
                by_fields: dict[tuple[str, ...], list[tuple[object, ...]]] = {}
                for i, fields in by_id.items():
                    check_patched(fields)
                    if i in pks and i not in outcome.changed:
                        names = tuple(sorted(fields))
                        assigned = tuple(BY_NAME[name].to_sqlite(fields[name]) for name in names)
                        by_fields.setdefault(names, []).append((*assigned, pks[i]))
                        outcome.ids.append(i)
                if not outcome.ids:
                    conn.execute("ROLLBACK")
                    return outcome
                for names, rows in by_fields.items():  # names of PATCHED_FIELDS, never a caller's
                    assignments = ", ".join(f"{name} = ?" for name in names)
                    conn.executemany(f"UPDATE observations SET {assignments} WHERE pk = ?", rows)
                mirrored = [pks[i] for i in outcome.ids if MIRRORED_FIELDS & set(by_id[i])]
                if not mirrored and all(set(names) <= {"citations"} for names in by_fields):
                    conn.execute("COMMIT")
                    return outcome
                change = restated(conn, mirrored) if mirrored else None
                generation = bump_generation(conn)
                self._commit(conn, generation, workspace_id, [], [], change)
            except BaseException:
                rollback(conn)
                raise
        return outcome
