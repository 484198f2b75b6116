"""Reindex of the embedded store: every chunk embedded again by another model while the old
vectors keep serving, then one transaction that makes the new model the store's.

The store records the model that built it (``meta.model_id`` / ``meta.dimension``, see
``db.read_model``); a process configured with another model refuses it, naming this command.
``neural-memory reindex --data-dir D`` runs with the *new* configuration:

1. **Aside.** The target is recorded (``meta.reindex_model_id`` / ``reindex_dimension``) and the
   new vectors go into ``chunk_vectors`` (chunk rowid → vector), never into ``chunks``: searches
   and the mirror read only ``chunks``, so every process keeps serving the old model's vectors,
   and these writes do not bump ``meta.generation`` (no mirror reloads while the reindex runs).
   A deleted or replaced chunk takes its new vector with it (``ON DELETE CASCADE``), and a vector
   is written only if its chunk still holds the text that was embedded (a rowid SQLite reused for
   another chunk meanwhile gets none).
2. **Batches, resumable.** Chunks are embedded in rowid order, ``batch`` at a time, each batch
   committed on its own, through the service's embedding cache (a text this model embedded
   before, in this workspace, is not embedded again). Progress *is* ``chunk_vectors``: a run
   stopped anyhow (Ctrl-C, SIGKILL, a crash) is resumed by running the command again; it skips
   every chunk that has its vector and redoes at most the batch that was not committed. A run
   for another target than the recorded one starts over.
3. **Catch-up.** Processes still configured with the old model (a ``serve`` beside the reindex)
   keep writing, embedded by the old model. When the first pass is done, the reindex looks again
   for chunks without a new vector (written meanwhile) and embeds them, until it finds few enough
   to embed inside the swap's own transaction.
4. **Swap.** One ``BEGIN IMMEDIATE`` transaction (writers wait for it): the last missing chunks are
   embedded, every chunk's ``embedding``/``model_id`` become the new ones (a chunk that needed no
   new vector loses its old one), ``chunk_vectors`` is emptied, ``meta.model_id`` names the new
   model and the generation is bumped, so every process's mirror reloads. The old vectors are
   dropped with the swap (the embedding cache keeps them, so going back costs no model time).
   After it, a process still configured with the old model is refused vector searches and
   embedded writes (``StoreModelMismatch``), and should be restarted with the new configuration.
   The swap rewrites every vector in one transaction: writers wait for it (about a second per
   50,000 chunks here); a data folder used by one machine can afford that pause.

What needs a vector: the chunks of embedded tiers that are searched by vector: passages, chunks
searched both ways, and every chunk of a store written without an embedder (each of its chunks is
searched both ways); not the lexical windows cut beside passages, and nothing of tier E (unless
it was embedded because it recurred: ``embedded_at``). A chunk embedded by the old model always
qualifies.
"""

from __future__ import annotations

import fcntl
import os
from array import array
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, get_args

from neural_memory.domain.chunking import embedding_text
from neural_memory.domain.tiers import is_embedded
from neural_memory.models import Tier
from neural_memory.stores.sqlite.db import (
    Model,
    bump_generation,
    connect,
    read_model,
    rollback,
    write_model,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    from neural_memory.models import Vector

BATCH = 64
# The swap embeds the chunks written since the last catch-up inside its transaction (writers wait
# for it), at most this many; more, and it catches up outside first.
SWAP_AT_MOST = 2 * BATCH
CATCH_UP_ROUNDS = 20

_EMBEDDED_TIERS = ", ".join(f"'{tier}'" for tier in get_args(Tier) if is_embedded(tier))  # literals of the model
# Chunks that want a vector of the store's model (see the module's docstring) and have no new one yet.
_WANTING = (
    f"FROM chunks c JOIN observations o ON o.pk = c.obs_pk WHERE (o.tier IN ({_EMBEDDED_TIERS}) "
    "OR o.embedded_at IS NOT NULL) "
    "AND (c.embedding IS NOT NULL OR c.lexical = 0 "
    "OR NOT EXISTS (SELECT 1 FROM chunks p WHERE p.obs_pk = c.obs_pk AND p.lexical = 0))"
)
_MISSING = f"{_WANTING} AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_rowid = c.rowid)"


class ReindexBusy(Exception):
    """Another ``neural-memory reindex`` works on this data folder now."""


@dataclass
class ReindexReport:
    """What a run did: ``source`` the store's model before (None: it held no vectors), ``target``
    the configured one, ``embedded`` chunks embedded by this run, ``total`` chunks that need a
    vector, ``swapped`` whether the target is now the store's model."""

    database: Path
    source: Model | None
    target: Model
    embedded: int = 0
    total: int = 0
    resumed: int = 0
    swapped: bool = False

    def summary(self) -> str:
        """One line for a person."""
        if not self.swapped:
            return f"the store in {self.database.parent} is built by {self.target[0]} already: nothing to reindex"
        was = f"{self.source[0]} ({self.source[1]} dims)" if self.source else "no model"
        resumed = f", {self.resumed} done by an earlier run" if self.resumed else ""
        return (
            f"{self.database.parent}: {was} -> {self.target[0]} ({self.target[1]} dims): "
            f"{self.total} chunks embedded ({self.embedded} by this run{resumed}); swapped in"
        )


@dataclass(frozen=True)
class _Row:
    rowid: int
    workspace_id: str
    text: str  # the embedding text (title and chunk)
    obs_pk: int
    chunk: str
    title: str


class SqliteReindexer:
    """Rebuilds the vectors of the store at ``database`` for ``target`` (model id, dimension),
    embedding through ``embed`` (``Service.embed_documents``: the cache, then the model)."""

    def __init__(
        self,
        database: Path,
        target: Model,
        embed: Callable[[str, Sequence[str]], list[Vector]],
        batch_size: int = BATCH,
    ) -> None:
        self._database = database
        self._target = target
        self._embed = embed
        self._batch = max(1, batch_size)

    def run(self, progress: Callable[[int, int], None] | None = None) -> ReindexReport:
        """Embed, catch up, swap (see the module's docstring). ``progress(done, total)`` after
        each batch. ``ReindexBusy`` if another run holds the folder's reindex lock."""
        with _reindex_lock(self._database):
            conn = connect(self._database)
            try:
                return self._run(conn, progress)
            finally:
                conn.close()

    def _run(self, conn: sqlite3.Connection, progress: Callable[[int, int], None] | None) -> ReindexReport:
        conn.execute("BEGIN IMMEDIATE")
        try:
            source, pending = read_model(conn), read_model(conn, "reindex_")
            if source == self._target:
                # Nothing to do, but a run for this model that was given up is cleared.
                if pending is not None:
                    conn.execute("DELETE FROM chunk_vectors")
                    write_model(conn, None, "reindex_")
                conn.execute("COMMIT")
                return ReindexReport(self._database, source, self._target)
            if pending != self._target:  # a first run, or one for another model: start over
                conn.execute("DELETE FROM chunk_vectors")
                write_model(conn, self._target, "reindex_")
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        report = ReindexReport(self._database, source, self._target)
        done = report.resumed = int(conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0])
        report.total = int(conn.execute(f"SELECT count(*) {_WANTING}").fetchone()[0])
        after = 0
        while batch := self._missing(conn, after, self._batch):
            report.embedded += self._write(conn, batch, self._vectors(batch))
            after = batch[-1].rowid
            done = int(conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0])
            if progress is not None:
                progress(done, report.total)
        for _ in range(CATCH_UP_ROUNDS):
            if self._swap(conn, report):
                embedded = conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").fetchone()[0]
                report.total = int(embedded)
                if progress is not None:
                    progress(report.total, report.total)
                return report
            # More was written since than the swap may hold writers for: catch up outside it.
            while batch := self._missing(conn, 0, self._batch):
                report.embedded += self._write(conn, batch, self._vectors(batch))
        raise RuntimeError("writers kept ahead of the reindex; run it again when they are quieter")

    @staticmethod
    def _missing(conn: sqlite3.Connection, after: int, limit: int) -> list[_Row]:
        """Up to ``limit`` chunks past rowid ``after`` that want a new vector and have none."""
        rows = conn.execute(
            f"SELECT c.rowid, o.workspace_id, o.title, c.text, c.obs_pk {_MISSING} AND c.rowid > ? "
            "ORDER BY c.rowid LIMIT ?",
            (after, limit),
        ).fetchall()
        return [
            _Row(int(r[0]), str(r[1]), embedding_text(str(r[2]), str(r[3])), int(r[4]), str(r[3]), str(r[2]))
            for r in rows
        ]

    def _vectors(self, rows: Sequence[_Row]) -> list[bytes]:
        """The target model's vectors of the rows (float32 bytes), embedded per workspace."""
        by_workspace: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            by_workspace.setdefault(row.workspace_id, []).append(i)
        out: list[bytes] = [b""] * len(rows)
        for workspace_id, at in by_workspace.items():
            vectors = self._embed(workspace_id, [rows[i].text for i in at])
            for i, vector in zip(at, vectors, strict=True):
                if len(vector) != self._target[1]:
                    raise ValueError(f"the embedder gave {len(vector)} dimensions, not {self._target[1]}")
                out[i] = array("f", vector).tobytes()
        return out

    @staticmethod
    def _write(conn: sqlite3.Connection, rows: Sequence[_Row], vectors: Sequence[bytes], *, own: bool = True) -> int:
        """Write the vectors of chunks that still hold the text embedded (one transaction unless
        ``own`` is False: inside the caller's); returns how many were written."""
        if own:
            conn.execute("BEGIN IMMEDIATE")
        try:
            written = 0
            for row, blob in zip(rows, vectors, strict=True):
                written += conn.execute(
                    "INSERT OR REPLACE INTO chunk_vectors (chunk_rowid, embedding) SELECT c.rowid, ? FROM chunks c "
                    "JOIN observations o ON o.pk = c.obs_pk WHERE c.rowid = ? AND c.obs_pk = ? AND c.text = ? "
                    "AND o.title = ?",
                    (blob, row.rowid, row.obs_pk, row.chunk, row.title),
                ).rowcount
            if own:
                conn.execute("COMMIT")
        except BaseException:
            if own:
                rollback(conn)
            raise
        return written

    def _swap(self, conn: sqlite3.Connection, report: ReindexReport) -> bool:
        """The swap, in one transaction; False (nothing changed) if more than ``SWAP_AT_MOST``
        chunks still lack a new vector."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            if read_model(conn, "reindex_") != self._target:
                raise ReindexBusy("the reindex was taken over by another run for another model")
            missing = self._missing(conn, 0, SWAP_AT_MOST + 1)
            if len(missing) > SWAP_AT_MOST:
                conn.execute("ROLLBACK")
                return False
            if missing:
                report.embedded += self._write(conn, missing, self._vectors(missing), own=False)
            conn.execute(
                "UPDATE chunks SET model_id = NULL, embedding = NULL WHERE embedding IS NOT NULL "
                "AND rowid NOT IN (SELECT chunk_rowid FROM chunk_vectors)"
            )
            conn.execute(
                "UPDATE chunks SET model_id = ?, embedding = v.embedding FROM chunk_vectors v "
                "WHERE v.chunk_rowid = chunks.rowid",
                (self._target[0],),
            )
            conn.execute("DELETE FROM chunk_vectors")
            write_model(conn, self._target)
            write_model(conn, None, "reindex_")
            bump_generation(conn)
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        report.swapped = True
        return True


@contextmanager
def _reindex_lock(database: Path) -> Iterator[None]:
    """The folder's reindex lock (a file of its own beside the database, never SQLite's): one run
    at a time; ``ReindexBusy`` if another holds it."""
    path = database.with_name(f"{database.name}.reindex")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ReindexBusy(f"another `neural-memory reindex` works on {path.parent}") from None
        yield
    finally:
        os.close(fd)
