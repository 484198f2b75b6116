"""The SQL side of the in-memory mirror (``mirror.ChunkMirror``): building it from the file
(``load_mirror``), its rows for a committed write (``chunk_rows``), what a patch restates in it
(``restated``), the rows a search's mask looks up (``SqlRowLookup``), and the exact scores of
approximate vector hits (``rescored``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neural_memory.clock import to_ms
from neural_memory.domain.filters import metadata_term
from neural_memory.stores.sqlite.fts import COLUMN_WEIGHTS
from neural_memory.stores.sqlite.mirror import ChunkMirror, ChunkRow
from neural_memory.stores.sqlite.partitions import TRAINING_SAMPLE, PartitionedVectors, partitions_for

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Sequence

    from numpy.typing import NDArray

    from neural_memory.domain.filters import MetadataScalar
    from neural_memory.stores.base import IndexedObservation


def chunk_rows(
    mirror: ChunkMirror,
    workspace_id: str,
    written: Sequence[tuple[int, IndexedObservation, int]],
    tokens: Sequence[tuple[dict[str, float], int]],
) -> list[ChunkRow]:
    """The mirror's rows of chunks a write made (rowid, item, chunk number), with their tokens;
    vectors only of the mirror's model."""
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
                trust=rec.trust,
            )
        )
    return rows


def restated(conn: sqlite3.Connection, pks: Sequence[int]) -> Callable[[ChunkMirror], None]:
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


def _fill_partitions(conn: sqlite3.Connection, mirror: ChunkMirror, sample: NDArray[np.float32], parts: int) -> None:
    """Train the mirror's partitioned vectors on ``sample``, then stream every vector into them."""
    mirror.partitioned = PartitionedVectors.train(sample, parts)
    cursor = conn.execute("SELECT rowid, embedding FROM chunks WHERE model_id = ?", (mirror.model_id,))
    while batch := cursor.fetchmany(16384):
        positions = mirror.positions_of(np.fromiter((rowid for rowid, _ in batch), dtype=np.int64, count=len(batch)))
        vectors = np.frombuffer(b"".join(blob for _, blob in batch), dtype=np.float32).reshape(len(batch), -1)
        present = positions >= 0
        mirror.add_vectors(positions[present], vectors[present])


def rescored(
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


class SqlRowLookup:
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

    def created_by(self, names: Sequence[str]) -> NDArray[np.int64]:
        """Chunk rowids whose observation one of these keys wrote (``observations_created_by``)."""
        rows = self._conn.execute(
            "SELECT c.rowid FROM observations o INDEXED BY observations_created_by CROSS JOIN chunks c "
            "ON c.obs_pk = o.pk WHERE o.workspace_id = ? AND o.created_by IS NOT NULL "
            f"AND o.created_by IN ({', '.join('?' * len(names))})",
            [self._workspace_id, *names],
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

    def flagged(self) -> NDArray[np.int64]:
        """Chunk rowids whose observation is flagged for review (a partial index of only those)."""
        rows = self._conn.execute(
            "SELECT c.rowid FROM observations o INDEXED BY observations_flagged CROSS JOIN chunks c "
            "ON c.obs_pk = o.pk WHERE o.workspace_id = ? AND o.flags IS NOT NULL",
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


def serves(mirror: ChunkMirror, want: tuple[str, int] | None) -> bool:
    """Whether the mirror holds the vectors a search needs (any mirror serves a lexical one)."""
    return want is None or (mirror.model_id, mirror.dimension) == want


def load_mirror(
    conn: sqlite3.Connection, model_id: str | None, dimension: int, generation: int, partition_from: int
) -> ChunkMirror:
    """The mirror built from the rows (inside the caller's read transaction at ``generation``).

    A store with ``partition_from`` vectors or more (the store's ``PARTITION_FROM``) gets
    partitioned vectors: a first pass reads the rows and a sample of vectors to train the
    partitions, a second pass streams the vectors into them, so the float32 matrix never has to
    fit in memory."""
    count = conn.execute("SELECT count(*) FROM chunks WHERE model_id = ?", (model_id,)).fetchone()[0]
    partitioned = count >= partition_from and model_id is not None
    every = max(count // TRAINING_SAMPLE, 1)
    sample: list[NDArray[np.float32]] = []
    mirror = ChunkMirror(model_id, dimension, generation)
    cursor = conn.execute(
        "SELECT c.rowid, o.workspace_id, o.source, o.observation_type, o.actor_name, o.tier, o.session_id, "
        "o.occurred_at, o.expires_at, CASE WHEN c.model_id = ? AND (NOT ? OR c.rowid % ? = 0) THEN c.embedding END, "
        "c.lexical, o.archived_at IS NOT NULL, o.trust FROM chunks c JOIN observations o ON o.pk = c.obs_pk",
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
                    trust=r[12],
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
