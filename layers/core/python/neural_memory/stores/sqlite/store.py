"""The embedded store: one SQLite file (WAL) holding observations, chunks, float32 vectors and an
FTS5 index, mirrored in memory by ``ChunkMirror`` for exact, filtered lexical and vector retrieval.

Tenancy: every statement carries ``workspace_id``, and the mirror masks by workspace.
Hostile input: filter values and text are bound parameters; query text reaches FTS5 only as
plain text to tokenize (never as MATCH syntax), so no FTS5 syntax from a caller is interpreted.

This module is the ``Store`` port's SQLite implementation: one class whose writes and reads share
one connection, lock and mirror. Its parts live beside it, one concept each: records as rows and
the statements a write or a read by id runs (``rows.py``), ``Find`` in SQL (``find.py``), facets
(``facets.py``), the embedding model the vectors are made by (``store_model.py``), the schema and
connections (``db.py``), FTS5 (``fts.py``), the mirror (``mirror.py``) and its SQL side
(``mirror_sql.py``), its snapshot, partitioned vectors and the reader/writer lock.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, overload

import numpy as np

from neural_memory.models import FacetCounts, Hit, ObservationRecord, Retrieved, UpsertOutcome
from neural_memory.observability import logger
from neural_memory.stores.base import MIRRORED_FIELDS, IndexedObservation, Patched, check_patched, holds
from neural_memory.stores.find import Find, Matching
from neural_memory.stores.sqlite.db import (
    LazyConnection,
    Model,
    Synchronous,
    bump_generation,
    connect,
    connect_reader,
    model_mismatch,
    read_generation,
    read_model,
    rollback,
)
from neural_memory.stores.sqlite.facets import facet_counts
from neural_memory.stores.sqlite.find import count_sql, find_sql
from neural_memory.stores.sqlite.fts import Tokenizer
from neural_memory.stores.sqlite.lock import ReadWriteLock
from neural_memory.stores.sqlite.mirror_sql import (
    SqlRowLookup,
    chunk_rows,
    load_mirror,
    rescored,
    restated,
    serves,
)
from neural_memory.stores.sqlite.partitions import PARTITION_FROM
from neural_memory.stores.sqlite.rows import (
    BY_NAME,
    RECORD_COLUMNS,
    chunk_vectors_of,
    delete_rows,
    pks_by_id,
    record_of,
    records_by_id,
    records_of_chunks,
    target_rows,
    write_chunks,
    write_record,
)
from neural_memory.stores.sqlite.snapshot import (
    SnapshotState,
    load_snapshot,
    save_snapshot,
    snapshot_path,
    snapshot_state,
)
from neural_memory.stores.sqlite.store_model import StoreModel

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from pathlib import Path

    from neural_memory.models import Vector
    from neural_memory.search.filters.model import Filter
    from neural_memory.stores.sqlite.mirror import ChunkMirror

# Approximate (partitioned) vector search fetches this many times ``limit`` before exact re-scoring.
CANDIDATES = 2


class _Reader:
    """One thread's connection to the file and its tokenizer (FTS5's, through a temp table)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.tokenizer = Tokenizer(conn)


class SqliteStore:
    """Observations of every workspace in one file; safe to share between threads.

    Searches run in parallel: each thread reads through its own connection, and the mirror is
    guarded by a readers-writer lock. Writes in this process take turns (SQLite allows one writer
    at a time anyway, across processes too); a write holds the mirror alone only while it commits
    and applies itself to the mirror, so a search never waits for a batch being embedded or
    written, and never sees SQLite and the mirror at different generations.
    """

    def __init__(self, path: Path, synchronous: Synchronous = "full") -> None:
        self._path = path
        self.synchronous: Synchronous = synchronous
        self._write_lock = threading.Lock()
        self._mirror_lock = ReadWriteLock()
        self._db = LazyConnection(lambda: connect(path, synchronous))
        self._readers = threading.local()
        self._reader_conns: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        # The mirror as of a generation, so a restart need not rebuild it (stale or damaged: rebuilt).
        self._snapshot = snapshot_path(path)
        self._tokenizer_: Tokenizer | None = None
        self._mirror: ChunkMirror | None = None
        self._model = StoreModel(path)

    @property
    def path(self) -> Path:
        """The database file (the audit trail is kept in it too: ``audit/sqlite.py``)."""
        return self._path

    @property
    def _conn(self) -> sqlite3.Connection:
        """The connection writes go through (callers hold ``_write_lock``)."""
        return self._db.get()

    @property
    def _tokenizer(self) -> Tokenizer:
        if self._tokenizer_ is None:
            self._tokenizer_ = Tokenizer(self._conn)
        return self._tokenizer_

    def _reader(self) -> _Reader:
        """This thread's read connection (opened after the schema is in place)."""
        reader: _Reader | None = getattr(self._readers, "reader", None)
        if reader is None:
            with self._write_lock:
                self._db.get()  # creates the file and schema once
            conn = connect_reader(self._path)
            with self._readers_lock:
                self._reader_conns.append(conn)
            reader = self._readers.reader = _Reader(conn)
        return reader

    def close(self) -> None:
        """Save the mirror for the next start (when it is current) and close every connection
        (reopened on next use)."""
        with self._write_lock, self._mirror_lock.writing():
            mirror = self._mirror
            if mirror is not None and self._db.is_open() and mirror.generation == read_generation(self._conn):
                save_snapshot(mirror, self._snapshot)
            self._db.close()
            self._tokenizer_ = None
            self._mirror = None
            with self._readers_lock:
                for conn in self._reader_conns:
                    conn.close()
                self._reader_conns.clear()
                self._readers = threading.local()

    # ------------------------------------------------------------------ writes

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

    # ------------------------------------------------------------------ reads

    def find(self, workspace_id: str, query: Find) -> list[ObservationRecord]:
        """The records of the workspace ``query`` matches, in its order (``stores/sqlite/find.py``)."""
        sql, params = find_sql(RECORD_COLUMNS, workspace_id, query)
        return [record_of(row) for row in self._reader().conn.execute(sql, params).fetchall()]

    def read(self, workspace_id: str, observation_ids: Sequence[str]) -> dict[str, ObservationRecord]:
        """The observations of this workspace among ``observation_ids``, by id (one read)."""
        ids = list(dict.fromkeys(observation_ids))
        if not ids:
            return {}
        rows = (
            self._reader()
            .conn.execute(
                f"SELECT {RECORD_COLUMNS} FROM observations o "
                f"WHERE o.workspace_id = ? AND o.id IN ({', '.join('?' * len(ids))})",
                (workspace_id, *ids),
            )
            .fetchall()
        )
        records = [record_of(row) for row in rows]
        return {record.id: record for record in records}

    def chunk_vectors(
        self, workspace_id: str, model_id: str, chunks: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], Sequence[float]]:
        """The vectors ``model_id`` made of these (observation id, chunk number) chunks (one read)."""
        if not chunks:
            return {}
        return chunk_vectors_of(self._reader().conn, workspace_id, model_id, chunks)

    def facets(self, workspace_id: str, flt: Filter, limit: int) -> FacetCounts:
        """Counts by value of each list field (``facets.py``), all in one read snapshot."""
        conn = self._reader().conn
        with _read_transaction(conn):
            return facet_counts(conn, workspace_id, flt, limit)

    @overload
    def count(self, workspace_id: str, query: Find | None = None) -> int: ...

    @overload
    def count(self, workspace_id: str | None, query: Find | None = None, *, by: str) -> dict[str, int]: ...

    def count(
        self, workspace_id: str | None, query: Find | None = None, *, by: str | None = None
    ) -> int | dict[str, int]:
        """How many records ``query`` matches, in total or by ``by`` (``stores/sqlite/find.py``)."""
        sql, params = count_sql(workspace_id, query or Find(), by)
        rows = self._reader().conn.execute(sql, params).fetchall()
        if by is None:
            return int(rows[0][0])
        return {str(value): int(count) for value, count in rows}

    def retrieve(
        self,
        workspace_id: str,
        *,
        text: str | None,
        vector: Vector | None,
        model_id: str | None,
        flt: Filter,
        limit: int,
    ) -> Retrieved:
        """Lexical and vector hits under the same filter (see the ``Store`` contract)."""
        reader = self._reader()
        terms = reader.tokenizer.query_terms(text) if text else []
        want = (model_id, len(vector)) if vector is not None and model_id is not None else None
        while True:
            with self._mirror_lock.reading(), _read_transaction(reader.conn) as generation:
                if want is not None:
                    self._model.refuse_other(reader.conn, generation, want)
                mirror = self._mirror
                if mirror is not None and mirror.generation == generation and serves(mirror, want):
                    keep = mirror.mask(workspace_id, flt, SqlRowLookup(reader.conn, workspace_id))
                    lexical = mirror.lexical_search(keep, terms, limit, workspace_id) if terms else []
                    query = np.asarray(vector, dtype=np.float32)
                    wanted = limit * CANDIDATES if mirror.partitioned is not None else limit
                    semantic = mirror.vector_search(keep, query, wanted) if want else []
                    if mirror.partitioned is not None:  # approximate candidates, exact scores
                        semantic = rescored(reader.conn, semantic, query, limit)
                    # Same snapshot as the mirror's generation: a rowid cannot name another chunk.
                    records = records_of_chunks(
                        reader.conn, workspace_id, {rowid for rowid, _ in (*lexical, *semantic)}
                    )
                    break
            with self._mirror_lock.writing():
                self._refresh_mirror(reader.conn, want)
        return Retrieved(
            lexical=[
                Hit(observation=records[r][1], chunk_no=records[r][0], score=s) for r, s in lexical if r in records
            ],
            vector=[
                Hit(observation=records[r][1], chunk_no=records[r][0], score=s) for r, s in semantic if r in records
            ],
        )

    def model(self) -> Model | None:
        """The (model id, dimension) the store is built for; None while it holds no vectors."""
        conn = self._reader().conn
        with _read_transaction(conn):
            return read_model(conn)

    def verify_model(self, configured: Model | None) -> None:
        """At start-up: ``StoreModelMismatch`` (naming ``neural-memory reindex``) if the store
        was built by another model than ``configured``; keyword-only (None) suits any store."""
        conn = self._reader().conn
        with _read_transaction(conn):
            built, pending = read_model(conn), read_model(conn, "reindex_")
        if configured is not None and built is not None and built != configured:
            raise model_mismatch(self._path, built, configured, pending)

    def _refresh_mirror(self, conn: sqlite3.Connection, want: tuple[str, int] | None) -> None:
        """Make the mirror current (another process wrote, or a vector search needs another
        model's vectors): the saved snapshot if it matches, else rebuilt from SQLite. Holds the
        mirror's write lock, so no write of this process commits meanwhile."""
        with _read_transaction(conn) as generation:
            mirror = self._mirror
            if mirror is not None and mirror.generation == generation and serves(mirror, want):
                return  # another thread refreshed it first
            # A keyword search takes a saved mirror of any model rather than rebuild one without vectors.
            loaded = load_snapshot(self._snapshot, generation, want)
            if loaded is None:
                model_id, dimension = want or (None, 1)
                loaded = load_mirror(conn, model_id, dimension, generation, PARTITION_FROM)
                save_snapshot(loaded, self._snapshot)
            elif loaded.partition_if_large(PARTITION_FROM):  # saved while the store was smaller
                save_snapshot(loaded, self._snapshot)
            self._mirror = loaded

    def refresh_snapshot(self) -> tuple[SnapshotState, int]:
        """Compare the saved mirror with the file and rebuild it unless it is current
        (``neural-memory check``, the end of ``neural-memory reindex``); returns how it stood and
        the file's generation. The rebuilt mirror holds the vectors of the store's model."""
        conn = self._reader().conn
        with _read_transaction(conn) as generation:
            state = snapshot_state(self._snapshot, generation)
            if state != "current":
                model_id, dimension = read_model(conn) or (None, 1)
                save_snapshot(load_mirror(conn, model_id, dimension, generation, PARTITION_FROM), self._snapshot)
        return state, generation


@contextmanager
def _read_transaction(conn: sqlite3.Connection) -> Iterator[int]:
    """One consistent snapshot of the file for the block; yields its write generation."""
    conn.execute("BEGIN")
    try:
        yield read_generation(conn)
    finally:
        conn.execute("COMMIT")
