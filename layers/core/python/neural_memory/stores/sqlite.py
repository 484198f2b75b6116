"""The embedded store: one SQLite file (WAL) with FTS5 for lexical search and float32 vectors
beside each chunk, mirrored in memory by ``VectorIndex`` for exact filtered k-NN.

Tenancy: every statement carries ``workspace_id``; the vector mirror masks by workspace too.
Hostile input: filter values and text are bound parameters; query text reaches FTS5 only as
quoted word tokens (see ``fts_query``), so no FTS5 syntax from a caller is ever interpreted.
"""

from __future__ import annotations

import json
import re
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from neural_memory.clock import from_ms, to_ms
from neural_memory.filters import render_sqlite
from neural_memory.models import Hit, ObservationRecord, Retrieved, UpsertOutcome
from neural_memory.stores.sqlite_db import bump_generation, connect, read_generation
from neural_memory.stores.sqlite_vectors import VectorIndex, VectorRow

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from neural_memory.filters import Filter
    from neural_memory.models import Vector
    from neural_memory.stores.base import IndexedObservation

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_TERMS = 64
# Title matches weigh twice body matches in BM25.
_BM25 = "bm25(chunks_fts, 2.0, 1.0)"
_RECORD_COLUMNS = (
    "o.id, o.source, o.source_type, o.observation_type, o.actor_name, o.occurred_at, o.ingested_at, "
    "o.expires_at, o.tier, o.title, o.content, o.url, o.session_id, o.parent_id, o.metadata, o.content_hash"
)


# Words that carry no topic: as OR terms they match nearly every document and cost the most.
STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have how i if in into is it "
    "its me my not of on or our so than that the their them then there these they this to was we were "
    "what when where which who why will with would you your".split()
)


def fts_query(text: str) -> str | None:
    """An FTS5 query matching any word of ``text``: each word quoted, joined by OR; stopwords are
    dropped unless the query has nothing else.

    Words are runs of letters and digits, so a quoted word can hold no quote or operator;
    ``"foo" OR NEAR(`` becomes ``"foo" OR "near"``. None if there is no word at all.
    """
    words = list(dict.fromkeys(word.lower() for word in _WORD.findall(text)))
    terms = [w for w in words if w not in STOPWORDS] or words
    return " OR ".join(f'"{term}"' for term in terms[:MAX_QUERY_TERMS]) or None


def _record(row: Sequence[Any]) -> ObservationRecord:
    return ObservationRecord(
        id=row[0],
        source=row[1],
        source_type=row[2],
        observation_type=row[3],
        actor_name=row[4],
        occurred_at=from_ms(row[5]),
        ingested_at=from_ms(row[6]),
        expires_at=None if row[7] is None else from_ms(row[7]),
        tier=row[8],
        title=row[9],
        content=row[10],
        url=row[11],
        session_id=row[12],
        parent_id=row[13],
        metadata=json.loads(row[14]),
        content_hash=row[15],
    )


class SqliteStore:
    """Observations of every workspace in one file; safe to share between threads."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.RLock()
        self._conn_: sqlite3.Connection | None = None
        self._indexes: dict[str, VectorIndex] = {}

    @property
    def _conn(self) -> sqlite3.Connection:
        if self._conn_ is None:
            self._conn_ = connect(self._path)
        return self._conn_

    def close(self) -> None:
        """Close the database connection (reopened on next use)."""
        with self._lock:
            if self._conn_ is not None:
                self._conn_.close()
                self._conn_ = None
            self._indexes.clear()

    # ------------------------------------------------------------------ writes

    def upsert(self, workspace_id: str, items: Sequence[IndexedObservation]) -> UpsertOutcome:
        """Insert or replace each observation and its chunks in one transaction."""
        outcome = UpsertOutcome()
        removed: list[int] = []
        added: list[tuple[str, VectorRow]] = []
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                for item in items:
                    pk, old_chunks = self._write_record(conn, workspace_id, item)
                    outcome.ids.append(item.record.id)
                    (outcome.updated if old_chunks is not None else outcome.created).append(item.record.id)
                    removed.extend(old_chunks or ())
                    added.extend(self._write_chunks(conn, workspace_id, pk, item))
                generation = bump_generation(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            self._sync_indexes(generation, removed, added)
        return outcome

    def _write_record(
        self, conn: sqlite3.Connection, workspace_id: str, item: IndexedObservation
    ) -> tuple[int, list[int] | None]:
        """Write the observation row; returns its pk and, if it existed, the rowids of its old chunks."""
        rec = item.record
        values = (
            rec.source,
            rec.source_type,
            rec.observation_type,
            rec.actor_name,
            to_ms(rec.occurred_at),
            to_ms(rec.ingested_at),
            None if rec.expires_at is None else to_ms(rec.expires_at),
            rec.tier,
            rec.title,
            rec.content,
            rec.url,
            rec.session_id,
            rec.parent_id,
            json.dumps(rec.metadata, separators=(",", ":")),
            rec.content_hash,
        )
        existing = conn.execute(
            "SELECT pk FROM observations WHERE workspace_id = ? AND id = ?", (workspace_id, rec.id)
        ).fetchone()
        if existing is None:
            row = conn.execute(
                "INSERT INTO observations (source, source_type, observation_type, actor_name, occurred_at, "
                "ingested_at, expires_at, tier, title, content, url, session_id, parent_id, metadata, "
                "content_hash, workspace_id, id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING pk",
                (*values, workspace_id, rec.id),
            ).fetchone()
            return int(row[0]), None
        pk = int(existing[0])
        old = [int(r[0]) for r in conn.execute("SELECT rowid FROM chunks WHERE obs_pk = ?", (pk,))]
        conn.execute("DELETE FROM chunks WHERE obs_pk = ?", (pk,))
        conn.execute(
            "UPDATE observations SET source = ?, source_type = ?, observation_type = ?, actor_name = ?, "
            "occurred_at = ?, ingested_at = ?, expires_at = ?, tier = ?, title = ?, content = ?, url = ?, "
            "session_id = ?, parent_id = ?, metadata = ?, content_hash = ? WHERE pk = ?",
            (*values, pk),
        )
        return pk, old

    @staticmethod
    def _write_chunks(
        conn: sqlite3.Connection, workspace_id: str, pk: int, item: IndexedObservation
    ) -> list[tuple[str, VectorRow]]:
        rec = item.record
        rows: list[tuple[str, VectorRow]] = []
        for chunk in item.chunks:
            blob = None if chunk.vector is None else np.asarray(chunk.vector, dtype=np.float32).tobytes()
            model_id = item.model_id if blob is not None else None
            rowid = conn.execute(
                "INSERT INTO chunks (obs_pk, chunk_no, text, model_id, embedding) VALUES (?, ?, ?, ?, ?) "
                "RETURNING rowid",
                (pk, chunk.chunk_no, chunk.text, model_id, blob),
            ).fetchone()[0]
            conn.execute("INSERT INTO chunks_fts (rowid, title, text) VALUES (?, ?, ?)", (rowid, rec.title, chunk.text))
            if model_id is not None and chunk.vector is not None:
                rows.append(
                    (
                        model_id,
                        VectorRow(
                            chunk_rowid=int(rowid),
                            vector=np.asarray(chunk.vector, dtype=np.float32),
                            workspace_id=workspace_id,
                            source=rec.source,
                            observation_type=rec.observation_type,
                            actor_name=rec.actor_name,
                            tier=rec.tier,
                            session_id=rec.session_id,
                            occurred_ms=to_ms(rec.occurred_at),
                            expires_ms=None if rec.expires_at is None else to_ms(rec.expires_at),
                        ),
                    )
                )
        return rows

    def _sync_indexes(self, generation: int, removed: Iterable[int], added: Sequence[tuple[str, VectorRow]]) -> None:
        """Apply our own committed write to the loaded mirrors, or drop a mirror that missed another
        process's write (it reloads on next use)."""
        removed = list(removed)
        for model_id, index in list(self._indexes.items()):
            if index.generation != generation - 1:
                del self._indexes[model_id]
                continue
            index.remove(removed)
            index.add([row for model, row in added if model == model_id])
            index.generation = generation

    def delete(self, workspace_id: str, observation_id: str) -> bool:
        """Delete the observation and its chunks; False if it is not in this workspace."""
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT pk FROM observations WHERE workspace_id = ? AND id = ?", (workspace_id, observation_id)
                ).fetchone()
                if row is None:
                    conn.execute("ROLLBACK")
                    return False
                chunks = [int(r[0]) for r in conn.execute("SELECT rowid FROM chunks WHERE obs_pk = ?", (row[0],))]
                conn.execute("DELETE FROM chunks WHERE obs_pk = ?", (row[0],))
                conn.execute("DELETE FROM observations WHERE pk = ?", (row[0],))
                generation = bump_generation(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            self._sync_indexes(generation, chunks, [])
        return True

    # ------------------------------------------------------------------ reads

    def get(self, workspace_id: str, observation_id: str) -> ObservationRecord | None:
        """The observation, or None if it is not in this workspace."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_RECORD_COLUMNS} FROM observations o WHERE o.workspace_id = ? AND o.id = ?",
                (workspace_id, observation_id),
            ).fetchone()
        return None if row is None else _record(row)

    def count(self, workspace_id: str) -> int:
        """Observations held by the workspace."""
        with self._lock:
            row = self._conn.execute("SELECT count(*) FROM observations WHERE workspace_id = ?", (workspace_id,))
            return int(row.fetchone()[0])

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
        with self._lock:
            lexical = self._lexical(workspace_id, text, flt, limit) if text else []
            semantic = self._vector(workspace_id, vector, model_id, flt, limit) if vector and model_id else []
        return Retrieved(lexical=lexical, vector=semantic)

    def _lexical(self, workspace_id: str, text: str, flt: Filter, limit: int) -> list[Hit]:
        match = fts_query(text)
        if match is None:
            return []
        where, params = render_sqlite(flt, "o")
        rows = self._conn.execute(
            f"SELECT c.chunk_no, {_BM25} AS rank, {_RECORD_COLUMNS} "
            "FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid JOIN observations o ON o.pk = c.obs_pk "
            f"WHERE chunks_fts MATCH ? AND o.workspace_id = ? AND {where} ORDER BY rank LIMIT ?",
            (match, workspace_id, *params, limit),
        ).fetchall()
        if not rows:
            return []
        best = min(float(r[1]) for r in rows)  # bm25() is negative: lower is better
        return [
            Hit(observation=_record(r[2:]), chunk_no=int(r[0]), score=float(r[1]) / best if best < 0 else 1.0)
            for r in rows
        ]

    def _vector(self, workspace_id: str, vector: Vector, model_id: str, flt: Filter, limit: int) -> list[Hit]:
        index = self._index_for(model_id, len(vector))
        best = index.search(workspace_id, flt, np.asarray(vector, dtype=np.float32), limit)
        if not best:
            return []
        scores = dict(best)
        placeholders = ", ".join("?" * len(best))
        rows = self._conn.execute(
            f"SELECT c.rowid, c.chunk_no, {_RECORD_COLUMNS} FROM chunks c JOIN observations o ON o.pk = c.obs_pk "
            f"WHERE o.workspace_id = ? AND c.rowid IN ({placeholders})",
            (workspace_id, *scores),
        ).fetchall()
        hits = [Hit(observation=_record(r[2:]), chunk_no=int(r[1]), score=scores[int(r[0])]) for r in rows]
        hits.sort(key=lambda hit: hit.score, reverse=True)
        return hits

    def _index_for(self, model_id: str, dimension: int) -> VectorIndex:
        """The mirror of ``model_id``'s vectors, (re)loaded when another process has written."""
        generation = read_generation(self._conn)
        index = self._indexes.get(model_id)
        if index is not None and index.generation == generation and index.dimension == dimension:
            return index
        index = VectorIndex(dimension, generation)
        cursor = self._conn.execute(
            "SELECT c.rowid, c.embedding, o.workspace_id, o.source, o.observation_type, o.actor_name, o.tier, "
            "o.session_id, o.occurred_at, o.expires_at FROM chunks c JOIN observations o ON o.pk = c.obs_pk "
            "WHERE c.model_id = ? AND c.embedding IS NOT NULL",
            (model_id,),
        )
        while batch := cursor.fetchmany(4096):
            index.add(
                [
                    VectorRow(
                        chunk_rowid=r[0],
                        vector=np.frombuffer(r[1], dtype=np.float32),
                        workspace_id=r[2],
                        source=r[3],
                        observation_type=r[4],
                        actor_name=r[5],
                        tier=r[6],
                        session_id=r[7],
                        occurred_ms=r[8],
                        expires_ms=r[9],
                    )
                    for r in batch
                    if len(r[1]) == dimension * 4
                ]
            )
        self._indexes[model_id] = index
        return index
