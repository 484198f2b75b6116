"""The embedded store: one SQLite file (WAL) holding observations, chunks, float32 vectors and an
FTS5 index, mirrored in memory by ``ChunkMirror`` for exact, filtered lexical and vector retrieval.

Tenancy: every statement carries ``workspace_id``, and the mirror masks by workspace.
Hostile input: filter values and text are bound parameters; query text reaches FTS5 only as
plain text to tokenize (never as MATCH syntax), so no FTS5 syntax from a caller is interpreted.

This module is the ``Store`` port's SQLite implementation: one class whose writes
(``store_writes.py``) and reads share one connection, lock and mirror. Its parts live beside it,
one concept each: records as rows and the statements a write or a read by id runs (``rows.py``),
``Find`` in SQL (``find.py``), facets (``facets.py``), the embedding model the vectors are made by
(``store_model.py``), the schema (``db.py``), the file and its connections (``files.py``), FTS5
(``fts.py``), the mirror (``mirror.py``) and its SQL side (``mirror_sql.py``), its snapshot,
partitioned vectors and the reader/writer lock.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, overload

import numpy as np

from neural_memory.models import FacetCounts, Hit, ObservationRecord, Retrieved
from neural_memory.stores.find import Find
from neural_memory.stores.sqlite.db import (
    Model,
    Synchronous,
    connect,
    model_mismatch,
    read_generation,
    read_model,
)
from neural_memory.stores.sqlite.facet_counts import facet_counts
from neural_memory.stores.sqlite.files import LazyConnection, connect_reader
from neural_memory.stores.sqlite.find import count_sql, find_sql
from neural_memory.stores.sqlite.fts import Tokenizer
from neural_memory.stores.sqlite.lock import ReadWriteLock
from neural_memory.stores.sqlite.mirror_sql import (
    SqlRowLookup,
    load_mirror,
    rescored,
    serves,
)
from neural_memory.stores.sqlite.partitions import PARTITION_FROM
from neural_memory.stores.sqlite.rows import (
    RECORD_COLUMNS,
    chunk_vectors_of,
    record_of,
    records_of_chunks,
)
from neural_memory.stores.sqlite.snapshot import (
    SnapshotState,
    load_snapshot,
    save_snapshot,
    snapshot_path,
    snapshot_state,
)
from neural_memory.stores.sqlite.store_model import StoreModel
from neural_memory.stores.sqlite.store_writes import SqliteStoreWrites

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    from neural_memory.domain.filters import Filter
    from neural_memory.models import Vector
    from neural_memory.stores.sqlite.mirror import ChunkMirror

# Approximate (partitioned) vector search fetches this many times ``limit`` before exact re-scoring.
CANDIDATES = 2


class _Reader:
    """One thread's connection to the file and its tokenizer (FTS5's, through a temp table)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.tokenizer = Tokenizer(conn)


class SqliteStore(SqliteStoreWrites):
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
