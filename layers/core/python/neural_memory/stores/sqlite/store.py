"""The embedded store: one SQLite file (WAL) holding observations, chunks, float32 vectors and an
FTS5 index, mirrored in memory by ``ChunkMirror`` for exact, filtered lexical and vector retrieval.

Tenancy: every statement carries ``workspace_id``, and the mirror masks by workspace.
Hostile input: filter values and text are bound parameters; query text reaches FTS5 only as
plain text to tokenize (never as MATCH syntax), so no FTS5 syntax from a caller is interpreted.

One module (~930 lines) because it is one cohesive thing: the ``Store`` port's SQLite implementation,
a single class whose writes, reads and SQL share one connection, lock and mirror. Its helpers live
beside it: the schema and connections (``db.py``), FTS5 (``fts.py``), the mirror and its snapshot,
partitioned vectors and the reader/writer lock.
"""

from __future__ import annotations

import array
import threading
from contextlib import contextmanager
from operator import attrgetter
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from neural_memory.clock import to_ms
from neural_memory.models import FacetCounts, Hit, ObservationRecord, Retrieved, UpsertOutcome
from neural_memory.observability import logger
from neural_memory.search.filters.model import LIST_FIELDS, metadata_term, without_field
from neural_memory.stores.base import (
    MIRRORED_FIELDS,
    PATCHED_FIELDS,
    IndexedObservation,
    Patched,
    holds,
    touches_code,
)
from neural_memory.stores.find import Find, Matching
from neural_memory.stores.record_fields import FIELD_NAMES, RECORD_FIELDS
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
    write_metadata_terms,
    write_model,
)
from neural_memory.stores.sqlite.find import count_sql, find_sql
from neural_memory.stores.sqlite.fts import COLUMN_WEIGHTS, Tokenizer
from neural_memory.stores.sqlite.lock import ReadWriteLock
from neural_memory.stores.sqlite.mirror import ChunkMirror, ChunkRow
from neural_memory.stores.sqlite.partitions import PARTITION_FROM, TRAINING_SAMPLE, PartitionedVectors, partitions_for
from neural_memory.stores.sqlite.snapshot import (
    SnapshotState,
    load_snapshot,
    save_snapshot,
    snapshot_path,
    snapshot_state,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from pathlib import Path

    from numpy.typing import NDArray

    from neural_memory.models import Vector
    from neural_memory.search.filters.model import Filter, MetadataScalar

_RECORD_COLUMNS = ", ".join(f"o.{name}" for name in FIELD_NAMES)
_UPDATABLE = [f for f in RECORD_FIELDS if f.name != "id"]
_INSERT = (
    f"INSERT INTO observations (workspace_id, {', '.join(FIELD_NAMES)}) "
    f"VALUES (?, {', '.join('?' * len(FIELD_NAMES))}) RETURNING pk"
)
# Approximate (partitioned) vector search fetches this many times ``limit`` before exact re-scoring.
CANDIDATES = 2
_UPDATE = f"UPDATE observations SET {', '.join(f'{f.name} = ?' for f in _UPDATABLE)} WHERE pk = ?"
_BY_NAME = {f.name: f for f in RECORD_FIELDS}
# Kinds ``RecordField.to_sqlite`` stores as they are: a written row reads every field in one call
# and converts only the others (times, JSON) that are set, most being None, rather than calling
# ``to_sqlite`` per column (28 columns, 100k rows at 100k: ~5% of an upsert).
_STORED_AS_IS = frozenset({"keyword", "text", "stored", "integer", "float", "boolean"})
_FIELD_VALUES = attrgetter(*FIELD_NAMES)
_CONVERTED = [(at, f.to_sqlite) for at, f in enumerate(RECORD_FIELDS) if f.kind not in _STORED_AS_IS]
_ID_AT = FIELD_NAMES.index("id")


def _column_values(record: ObservationRecord) -> list[Any]:
    """The record's column values in ``FIELD_NAMES`` order, as ``RecordField.to_sqlite`` makes them."""
    values = list(_FIELD_VALUES(record))
    for at, to_sqlite in _CONVERTED:
        if values[at] is not None:
            values[at] = to_sqlite(values[at])
    return values


def _record(row: Sequence[Any]) -> ObservationRecord:
    # Rows were validated as records when written: read back without validating again (a search
    # reads dozens per request).
    return ObservationRecord.model_construct(
        **{f.name: f.from_sqlite(value) for f, value in zip(RECORD_FIELDS, row, strict=True)}
    )


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
        # (generation, the store's model, the model a reindex under way builds it for) as last read.
        self._model: tuple[int, Model | None, Model | None] | None = None

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

    def upsert(
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
                    current = self._records_by_id(conn, workspace_id, list(expected))
                    outcome.stale = [i for i, state in expected.items() if not holds(current.get(i), state)]
                    items = [item for item in items if item.record.id not in outcome.stale]
                    if not items:  # nothing to write: no new generation, no mirror reloaded anywhere
                        conn.execute("ROLLBACK")
                        return outcome
                self._check_model(conn, items)
                # One read of the batch's stored pks rather than one per item; a repeated id finds
                # the row its first occurrence wrote.
                pks = self._pks_by_id(conn, workspace_id, {item.record.id for item in items})
                for item in items:
                    pk, old_chunks = self._write_record(conn, workspace_id, item, pks.get(item.record.id))
                    pks[item.record.id] = pk
                    outcome.ids.append(item.record.id)
                    (outcome.updated if old_chunks is not None else outcome.created).append(item.record.id)
                    for rowid in old_chunks or ():
                        if alive.pop(rowid, None) is None:
                            removed.add(rowid)
                    alive.update((rowid, (item, n)) for n, rowid in enumerate(self._write_chunks(conn, pk, item)))
                generation = bump_generation(conn)
                self._commit(conn, generation, workspace_id, removed, [(r, *where) for r, where in alive.items()])
            except BaseException:
                rollback(conn)
                raise
        return outcome

    @staticmethod
    def _pks_by_id(conn: sqlite3.Connection, workspace_id: str, ids: Iterable[str]) -> dict[str, int]:
        """The pks of the workspace's observations among ``ids``, read on ``conn`` (inside its transaction)."""
        found: dict[str, int] = {}
        wanted = list(ids)
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            rows = conn.execute(
                f"SELECT id, pk FROM observations WHERE workspace_id = ? AND id IN ({', '.join('?' * len(batch))})",
                (workspace_id, *batch),
            )
            found.update((str(observation_id), int(pk)) for observation_id, pk in rows)
        return found

    @staticmethod
    def _records_by_id(conn: sqlite3.Connection, workspace_id: str, ids: Sequence[str]) -> dict[str, ObservationRecord]:
        """The workspace's records among ``ids``, read on ``conn`` (inside its transaction)."""
        found: dict[str, ObservationRecord] = {}
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            rows = conn.execute(
                f"SELECT {_RECORD_COLUMNS} FROM observations o WHERE o.workspace_id = ? "
                f"AND o.id IN ({', '.join('?' * len(batch))})",
                (workspace_id, *batch),
            )
            found.update((record.id, record) for record in map(_record, rows))
        return found

    def _check_model(self, conn: sqlite3.Connection, items: Sequence[IndexedObservation]) -> None:
        """Vectors are written only by the store's model (inside the write's transaction, so a
        reindex's swap cannot slip in between): the first model to write vectors into a store
        that has none becomes its model; another one is refused (``StoreModelMismatch``)."""
        written = {
            (item.model_id, len(chunk.vector))
            for item in items
            if item.model_id is not None
            for chunk in item.chunks
            if chunk.vector is not None
        }
        if not written:
            return
        built = read_model(conn)
        if built is None:
            write_model(conn, built := min(written))
        for model in written:
            if model != built:
                raise model_mismatch(self._path, built or model, model, read_model(conn, "reindex_"))

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

    def _write_record(
        self, conn: sqlite3.Connection, workspace_id: str, item: IndexedObservation, existing: int | None
    ) -> tuple[int, list[int] | None]:
        """Write the observation row (``existing``: the pk of its stored row, if any); returns its
        pk and, if it existed, the rowids of its old chunks."""
        rec = item.record
        if existing is None:
            row = conn.execute(_INSERT, (workspace_id, *_column_values(rec))).fetchone()
            write_metadata_terms(conn, int(row[0]), rec.metadata, rec.code_refs, suffixes=touches_code(rec))
            return int(row[0]), None
        pk = existing
        old = [int(r[0]) for r in conn.execute("SELECT rowid FROM chunks WHERE obs_pk = ?", (pk,))]
        conn.execute("DELETE FROM chunks WHERE obs_pk = ?", (pk,))
        values = _column_values(rec)
        del values[_ID_AT]  # the columns of ``_UPDATABLE``
        conn.execute(_UPDATE, (*values, pk))
        conn.execute("DELETE FROM metadata_terms WHERE obs_pk = ?", (pk,))
        write_metadata_terms(conn, pk, rec.metadata, rec.code_refs, suffixes=touches_code(rec))
        return pk, old

    @staticmethod
    def _write_chunks(conn: sqlite3.Connection, pk: int, item: IndexedObservation) -> list[int]:
        """Insert the chunks and the FTS5 rows of those searched lexically (a passage has none, so
        it counts in no BM25 statistic); returns the new chunk rowids in chunk order."""
        rowids = []
        for chunk in item.chunks:
            blob = None if chunk.vector is None else np.asarray(chunk.vector, dtype=np.float32).tobytes()
            model_id = item.model_id if blob is not None else None
            rowid = conn.execute(
                "INSERT INTO chunks (obs_pk, chunk_no, text, model_id, embedding, lexical) VALUES (?, ?, ?, ?, ?, ?) "
                "RETURNING rowid",
                (pk, chunk.chunk_no, chunk.text, model_id, blob, int(chunk.lexical)),
            ).fetchone()[0]
            if chunk.lexical:
                conn.execute(
                    "INSERT INTO chunks_fts (rowid, title, text) VALUES (?, ?, ?)",
                    (rowid, item.record.title, chunk.text),
                )
            rowids.append(int(rowid))
        return rowids

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
        rows = []
        for (rowid, item, n), (terms, length) in zip(written, tokens, strict=True):
            rec, chunk = item.record, item.chunks[n]
            same_model = chunk.vector is not None and item.model_id == mirror.model_id
            rows.append(
                ChunkRow(
                    chunk_rowid=rowid,
                    workspace_id=workspace_id,
                    source=rec.source,
                    observation_type=rec.observation_type,
                    actor_name=rec.actor_name,
                    tier=rec.tier,
                    session_id=rec.session_id,
                    occurred_ms=to_ms(rec.occurred_at),
                    expires_ms=None if rec.expires_at is None else to_ms(rec.expires_at),
                    vector=np.asarray(chunk.vector, dtype=np.float32) if same_model else None,
                    terms=terms,
                    length=length,
                    lexical=chunk.lexical,
                    archived=rec.archived_at is not None,
                )
            )
        mirror.add(rows)
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
                pks = [pk for pk, _ in self._targets(conn, workspace_id, target)]
                if not pks:  # nothing to delete: no new generation, no mirror reloaded anywhere
                    conn.execute("ROLLBACK")
                    return False if isinstance(target, str) else 0
                chunks: list[int] = []
                for start in range(0, len(pks), 500):
                    batch = pks[start : start + 500]
                    marks = ", ".join("?" * len(batch))
                    rows = conn.execute(f"SELECT rowid FROM chunks WHERE obs_pk IN ({marks})", batch)
                    chunks += [int(rowid) for (rowid,) in rows]
                    conn.execute(f"DELETE FROM chunks WHERE obs_pk IN ({marks})", batch)
                    conn.execute(f"DELETE FROM observations WHERE pk IN ({marks})", batch)
                generation = bump_generation(conn)
                self._commit(conn, generation, workspace_id, chunks, [])
            except BaseException:
                rollback(conn)
                raise
        return True if isinstance(target, str) else len(pks)

    @staticmethod
    def _targets(conn: sqlite3.Connection, workspace_id: str, target: str | Find) -> list[tuple[int, str]]:
        """(pk, id) of the records ``target`` names (an id, or a ``Find``), read on ``conn``."""
        if isinstance(target, str):
            sql = "SELECT pk, id FROM observations WHERE workspace_id = ? AND id = ?"
            params: list[object] = [workspace_id, target]
        else:
            if target.holding_vectors:
                raise ValueError("holding_vectors is a condition on records: find and count only")
            sql, params = find_sql("o.pk, o.id", workspace_id, target)
        return [(int(pk), str(observation_id)) for pk, observation_id in conn.execute(sql, params)]

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
                    found = self._targets(conn, workspace_id, changes.find)
                    by_id: dict[str, Mapping[str, object]] = {i: changes.fields for _, i in found}
                    pks = {i: pk for pk, i in found}
                else:
                    by_id = dict(changes)
                    pks = self._pks_by_id(conn, workspace_id, by_id)
                if expected:
                    current = self._records_by_id(conn, workspace_id, [i for i in expected if i in pks])
                    for i, values in expected.items():
                        if (record := current.get(i)) is not None and any(
                            getattr(record, name) != value for name, value in values.items()
                        ):
                            outcome.changed[i] = record
                by_fields: dict[tuple[str, ...], list[tuple[object, ...]]] = {}
                for i, fields in by_id.items():
                    if not set(fields) <= PATCHED_FIELDS:
                        raise ValueError(f"patch sets only {sorted(PATCHED_FIELDS)}, not {sorted(set(fields))}")
                    if i in pks and i not in outcome.changed:
                        names = tuple(sorted(fields))
                        assigned = tuple(_BY_NAME[name].to_sqlite(fields[name]) for name in names)
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
                change = _restated(conn, mirrored) if mirrored else None
                generation = bump_generation(conn)
                self._commit(conn, generation, workspace_id, [], [], change)
            except BaseException:
                rollback(conn)
                raise
        return outcome

    # ------------------------------------------------------------------ reads

    def get(self, workspace_id: str, observation_id: str) -> ObservationRecord | None:
        """The observation, or None if it is not in this workspace."""
        row = (
            self._reader()
            .conn.execute(
                f"SELECT {_RECORD_COLUMNS} FROM observations o WHERE o.workspace_id = ? AND o.id = ?",
                (workspace_id, observation_id),
            )
            .fetchone()
        )
        return None if row is None else _record(row)

    def find(self, workspace_id: str, query: Find) -> list[ObservationRecord]:
        """The records of the workspace ``query`` matches, in its order (``stores/sqlite/find.py``)."""
        sql, params = find_sql(_RECORD_COLUMNS, workspace_id, query)
        return [_record(row) for row in self._reader().conn.execute(sql, params).fetchall()]

    def get_many(self, workspace_id: str, observation_ids: Sequence[str]) -> dict[str, ObservationRecord]:
        """The observations of this workspace among ``observation_ids``, by id (one read)."""
        ids = list(dict.fromkeys(observation_ids))
        if not ids:
            return {}
        rows = (
            self._reader()
            .conn.execute(
                f"SELECT {_RECORD_COLUMNS} FROM observations o "
                f"WHERE o.workspace_id = ? AND o.id IN ({', '.join('?' * len(ids))})",
                (workspace_id, *ids),
            )
            .fetchall()
        )
        records = [_record(row) for row in rows]
        return {record.id: record for record in records}

    def chunk_vectors(
        self, workspace_id: str, model_id: str, chunks: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], Sequence[float]]:
        """The vectors ``model_id`` made of these (observation id, chunk number) chunks (one read)."""
        wanted = set(chunks)
        ids = list(dict.fromkeys(observation_id for observation_id, _ in chunks))
        if not ids:
            return {}
        rows = (
            self._reader()
            .conn.execute(
                # CROSS JOIN keeps the few observations as the outer loop (else the planner may walk
                # every chunk of the model: 70 ms at 100k).
                "SELECT o.id, c.chunk_no, c.embedding FROM observations o CROSS JOIN chunks c ON c.obs_pk = o.pk "
                f"WHERE o.workspace_id = ? AND o.id IN ({', '.join('?' * len(ids))}) AND c.model_id = ? "
                "AND c.embedding IS NOT NULL",
                (workspace_id, *ids, model_id),
            )
            .fetchall()
        )
        return {
            # array.array copies the blob as it is: no Python float per component.
            (str(observation_id), int(chunk_no)): array.array("f", blob)
            for observation_id, chunk_no, blob in rows
            if (observation_id, chunk_no) in wanted
        }

    def facets(self, workspace_id: str, flt: Filter, limit: int) -> FacetCounts:
        """Counts by value of each list field (see the ``Store`` protocol): one GROUP BY per field,
        all in one read snapshot."""
        if flt.metadata or flt.any_of or flt.exclude_session_id is not None:
            raise ValueError("facets read list, date, TTL and supersession conditions only")
        conn = self._reader().conn
        by_field: dict[str, list[tuple[str, int]]] = {}
        with _read_transaction(conn):
            where, params = _facet_conditions(flt)
            total = conn.execute(
                f"SELECT count(*) FROM observations o WHERE o.workspace_id = ? AND {where}", [workspace_id, *params]
            ).fetchone()[0]
            for column in LIST_FIELDS:  # names from the model, never from a caller
                where, params = _facet_conditions(without_field(flt, column))
                rows = conn.execute(
                    f"SELECT o.{column}, count(*) FROM observations o WHERE o.workspace_id = ? AND {where} "
                    f"AND o.{column} IS NOT NULL GROUP BY o.{column} ORDER BY count(*) DESC, o.{column} LIMIT ?",
                    [workspace_id, *params, limit],
                ).fetchall()
                by_field[column] = [(str(value), int(count)) for value, count in rows]
        return FacetCounts(total=int(total), by_field=by_field)

    @overload
    def count(self, workspace_id: str, query: Find | None = None) -> int: ...

    @overload
    def count(self, workspace_id: str | None, query: Find | None = None, *, by: str) -> dict[str, int]: ...

    def count(
        self, workspace_id: str | None, query: Find | None = None, *, by: str | None = None
    ) -> int | dict[str, int]:
        """How many records ``query`` matches, in total or by ``by`` (``stores/sqlite/find.py``)."""
        if workspace_id is None and by != "workspace_id":
            raise ValueError("only a count by workspace_id is asked across workspaces")
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
                    self._refuse_other_model(reader.conn, generation, want)
                mirror = self._mirror
                if mirror is not None and mirror.generation == generation and _serves(mirror, want):
                    keep = mirror.mask(workspace_id, flt, _SqlRowLookup(reader.conn, workspace_id))
                    lexical = mirror.lexical_search(keep, terms, limit, workspace_id) if terms else []
                    query = np.asarray(vector, dtype=np.float32)
                    wanted = limit * CANDIDATES if mirror.partitioned is not None else limit
                    semantic = mirror.vector_search(keep, query, wanted) if want else []
                    if mirror.partitioned is not None:  # approximate candidates, exact scores
                        semantic = _rescored(reader.conn, semantic, query, limit)
                    # Same snapshot as the mirror's generation: a rowid cannot name another chunk.
                    records = _records(reader.conn, workspace_id, {rowid for rowid, _ in (*lexical, *semantic)})
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

    def _refuse_other_model(self, conn: sqlite3.Connection, generation: int, want: Model) -> None:
        """A vector search by another model than the store's is refused, naming the reindex (a
        store with no model yet has no vectors to compare: it answers with none). The store's
        model is read once per generation (a reindex's swap bumps it)."""
        known = self._model
        if known is None or known[0] != generation:
            known = self._model = (generation, read_model(conn), read_model(conn, "reindex_"))
        _, built, pending = known
        if built is not None and built != want:
            raise model_mismatch(self._path, built, want, pending)

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
            if mirror is not None and mirror.generation == generation and _serves(mirror, want):
                return  # another thread refreshed it first
            # A keyword search takes a saved mirror of any model rather than rebuild one without vectors.
            loaded = load_snapshot(self._snapshot, generation, want)
            if loaded is None:
                model_id, dimension = want or (None, 1)
                loaded = _load_mirror(conn, model_id, dimension, generation)
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
                save_snapshot(_load_mirror(conn, model_id, dimension, generation), self._snapshot)
        return state, generation


def _fill_partitions(conn: sqlite3.Connection, mirror: ChunkMirror, sample: NDArray[np.float32], parts: int) -> None:
    """Train the mirror's partitioned vectors on ``sample``, then stream every vector into them."""
    mirror.partitioned = PartitionedVectors.train(sample, parts)
    cursor = conn.execute("SELECT rowid, embedding FROM chunks WHERE model_id = ?", (mirror.model_id,))
    while batch := cursor.fetchmany(16384):
        positions = mirror.positions_of(np.fromiter((rowid for rowid, _ in batch), dtype=np.int64, count=len(batch)))
        vectors = np.frombuffer(b"".join(blob for _, blob in batch), dtype=np.float32).reshape(len(batch), -1)
        present = positions >= 0
        mirror.add_vectors(positions[present], vectors[present])


def _rescored(
    conn: sqlite3.Connection, hits: list[tuple[int, float]], query: NDArray[np.float32], limit: int
) -> list[tuple[int, float]]:
    """Exact cosines (clipped to [0, 1]) of approximate vector hits, from their float32 vectors; best ``limit``."""
    if not hits:
        return []
    rowids = [rowid for rowid, _ in hits]
    rows = conn.execute(
        f"SELECT rowid, embedding FROM chunks WHERE rowid IN ({', '.join('?' * len(rowids))})", rowids
    ).fetchall()
    scored = [
        (int(rowid), min(1.0, max(0.0, float(np.frombuffer(blob, dtype=np.float32) @ query))))
        for rowid, blob in rows
        if blob is not None
    ]
    scored.sort(key=lambda hit: -hit[1])
    return scored[:limit]


def _facet_conditions(flt: Filter) -> tuple[str, list[object]]:
    """SQL conditions on the observations table ``o`` for what facets read of ``flt``: live at
    ``flt.live_at``, not superseded (unless asked), the list fields' values and exclusions (a
    record without a value is never excluded), and the date range. Values are bound, never spliced."""
    clauses = ["(o.expires_at IS NULL OR o.expires_at > ?)"]
    params: list[object] = [to_ms(flt.live_at)]
    if not flt.include_superseded:
        clauses.append("o.superseded_by IS NULL")
    if not flt.include_archived:
        clauses.append("o.archived_at IS NULL")
    for column, values in flt.terms():
        clauses.append(f"o.{column} IN ({', '.join('?' * len(values))})")
        params.extend(values)
    for column, values in flt.excluded_terms():
        clauses.append(f"(o.{column} IS NULL OR o.{column} NOT IN ({', '.join('?' * len(values))}))")
        params.extend(values)
    if flt.occurred_from is not None:
        clauses.append("o.occurred_at >= ?")
        params.append(to_ms(flt.occurred_from))
    if flt.occurred_to is not None:
        clauses.append("o.occurred_at <= ?")
        params.append(to_ms(flt.occurred_to))
    return " AND ".join(clauses), params


@contextmanager
def _read_transaction(conn: sqlite3.Connection) -> Iterator[int]:
    """One consistent snapshot of the file for the block; yields its write generation."""
    conn.execute("BEGIN")
    try:
        yield read_generation(conn)
    finally:
        conn.execute("COMMIT")


class _SqlRowLookup:
    """``RowLookup`` over one connection, inside the search's read transaction."""

    def __init__(self, conn: sqlite3.Connection, workspace_id: str) -> None:
        self._conn = conn
        self._workspace_id = workspace_id

    def metadata(self, pairs: Sequence[tuple[str, MetadataScalar]]) -> NDArray[np.int64]:
        """Chunk rowids whose observation's metadata has each key at exactly its value (the same
        JSON type; 42 = 42.0), through the indexed ``metadata_terms`` (as OpenSearch's field)."""
        terms = sorted({metadata_term(key, value) for key, value in pairs})
        rows = self._conn.execute(
            "SELECT c.rowid FROM metadata_terms t CROSS JOIN observations o ON o.pk = t.obs_pk "
            f"CROSS JOIN chunks c ON c.obs_pk = o.pk WHERE t.term IN ({', '.join('?' * len(terms))}) "
            "AND o.workspace_id = ? GROUP BY c.rowid HAVING count(DISTINCT t.term) = ?",
            [*terms, self._workspace_id, len(terms)],
        ).fetchall()
        return np.fromiter((rowid for (rowid,) in rows), dtype=np.int64, count=len(rows))

    def stale(self) -> NDArray[np.int64]:
        """Chunk rowids whose observation is marked possibly stale (a partial index of only those)."""
        rows = self._conn.execute(
            "SELECT c.rowid FROM observations o INDEXED BY observations_stale CROSS JOIN chunks c "
            "ON c.obs_pk = o.pk WHERE o.workspace_id = ? AND o.possibly_stale IS NOT NULL",
            [self._workspace_id],
        ).fetchall()
        return np.fromiter((rowid for (rowid,) in rows), dtype=np.int64, count=len(rows))

    def superseded(self) -> NDArray[np.int64]:
        """Chunk rowids whose observation another one supersedes (read from a partial index of
        only those, so a search pays nothing for a workspace without supersession)."""
        rows = self._conn.execute(
            "SELECT c.rowid FROM observations o INDEXED BY observations_superseded CROSS JOIN chunks c "
            "ON c.obs_pk = o.pk WHERE o.workspace_id = ? AND o.superseded_by IS NOT NULL",
            [self._workspace_id],
        ).fetchall()
        return np.fromiter((rowid for (rowid,) in rows), dtype=np.int64, count=len(rows))


def _serves(mirror: ChunkMirror, want: tuple[str, int] | None) -> bool:
    """Whether the mirror holds the vectors a search needs (any mirror serves a lexical one)."""
    return want is None or (mirror.model_id, mirror.dimension) == want


def _records(conn: sqlite3.Connection, workspace_id: str, rowids: set[int]) -> dict[int, tuple[int, ObservationRecord]]:
    """(chunk number, observation) per chunk rowid, in one read, scoped to the workspace."""
    if not rowids:
        return {}
    placeholders = ", ".join("?" * len(rowids))
    # CROSS JOIN keeps chunks as the outer loop: look up the few rowids, rather than let the
    # planner walk the workspace index over every observation (70 ms at 100k).
    rows = conn.execute(
        f"SELECT c.rowid, c.chunk_no, {_RECORD_COLUMNS} FROM chunks c CROSS JOIN observations o "
        f"ON o.pk = c.obs_pk WHERE c.rowid IN ({placeholders}) AND o.workspace_id = ?",
        (*rowids, workspace_id),
    ).fetchall()
    return {int(r[0]): (int(r[1]), _record(r[2:])) for r in rows}


def _load_mirror(conn: sqlite3.Connection, model_id: str | None, dimension: int, generation: int) -> ChunkMirror:
    """The mirror built from the rows (inside the caller's read transaction at ``generation``).

    A store with ``PARTITION_FROM`` vectors or more gets partitioned vectors: a first pass reads
    the rows and a sample of vectors to train the partitions, a second pass streams the vectors
    into them, so the float32 matrix never has to fit in memory."""
    count = conn.execute("SELECT count(*) FROM chunks WHERE model_id = ?", (model_id,)).fetchone()[0]
    partitioned = count >= PARTITION_FROM and model_id is not None
    every = max(count // TRAINING_SAMPLE, 1)
    sample: list[NDArray[np.float32]] = []
    mirror = ChunkMirror(model_id, dimension, generation)
    cursor = conn.execute(
        "SELECT c.rowid, o.workspace_id, o.source, o.observation_type, o.actor_name, o.tier, o.session_id, "
        "o.occurred_at, o.expires_at, CASE WHEN c.model_id = ? AND (NOT ? OR c.rowid % ? = 0) THEN c.embedding END, "
        "c.lexical, o.archived_at IS NOT NULL FROM chunks c JOIN observations o ON o.pk = c.obs_pk",
        (model_id, partitioned, every),
    )
    while batch := cursor.fetchmany(4096):
        if partitioned:
            sample.extend(np.frombuffer(r[9], dtype=np.float32) for r in batch if r[9] is not None)
        mirror.add(
            [
                ChunkRow(
                    chunk_rowid=r[0],
                    workspace_id=r[1],
                    source=r[2],
                    observation_type=r[3],
                    actor_name=r[4],
                    tier=r[5],
                    session_id=r[6],
                    occurred_ms=r[7],
                    expires_ms=r[8],
                    vector=None if r[9] is None or partitioned else np.frombuffer(r[9], dtype=np.float32),
                    lexical=bool(r[10]),
                    archived=bool(r[11]),
                )
                for r in batch
            ]
        )
    if partitioned:
        _fill_partitions(conn, mirror, np.stack(sample), partitions_for(count))
    # Postings and lengths straight from FTS5's index, so terms are exactly FTS5's.
    weight = " ".join(f"WHEN '{col}' THEN {w}" for col, w in COLUMN_WEIGHTS.items())
    lengths: dict[int, int] = {}
    slots = mirror.slots()  # a plain list: the loop below runs once per (term, chunk)
    previous = None
    for term, doc, frequency, count in conn.execute(
        f"SELECT term, doc, sum(CASE col {weight} ELSE 1.0 END), count(*) FROM chunks_vocab GROUP BY term, doc"
    ):
        if term != previous:  # rows come term by term: settle each, so only one term's list is pending
            mirror.settle()
            previous = term
        at = slots[doc] if doc < len(slots) else -1
        if at >= 0:
            mirror.add_posting(term, at, frequency)
            lengths[at] = lengths.get(at, 0) + count
    for at, length in lengths.items():
        mirror.set_length(at, length)
    mirror.settle()
    return mirror


def _restated(conn: sqlite3.Connection, pks: Sequence[int]) -> Callable[[ChunkMirror], None]:
    """What the mirror restates once a patch of these records' tier, expiry or archive commits:
    each one's chunks with the values now in its row (read on ``conn``, inside the patch)."""
    rows: list[tuple[list[int], str, int | None, bool]] = []
    for start in range(0, len(pks), 500):
        batch = pks[start : start + 500]
        marks = ", ".join("?" * len(batch))
        chunks: dict[int, list[int]] = {}
        for obs_pk, rowid in conn.execute(f"SELECT obs_pk, rowid FROM chunks WHERE obs_pk IN ({marks})", batch):
            chunks.setdefault(int(obs_pk), []).append(int(rowid))
        for pk, tier, expires_ms, archived in conn.execute(
            f"SELECT pk, tier, expires_at, archived_at IS NOT NULL FROM observations WHERE pk IN ({marks})", batch
        ):
            rows.append((chunks.get(int(pk), []), str(tier), expires_ms, bool(archived)))

    def change(mirror: ChunkMirror) -> None:
        for chunks, tier, expires_ms, archived in rows:
            mirror.restate(chunks, tier=tier, expires_ms=expires_ms, archived=archived)

    return change
