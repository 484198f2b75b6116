"""A persistent embedding cache keyed by (model, workspace, sha256 of the text): an unchanged text
is never embedded twice in a workspace — on re-ingest, on replays, and across evaluation runs.

Entries are per workspace so the cache is no oracle: how fast one workspace's ingest returns
never tells whether another workspace stored the same text."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from array import array
from typing import TYPE_CHECKING

from neural_memory.domain.ids import text_key
from neural_memory.observability import logger
from neural_memory.stores.sqlite.files import LazyConnection, is_damaged, make_private, set_aside

__all__ = ["EmbeddingCache"]

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from neural_memory.models import Vector


def _stored_key(workspace_id: str, text: str) -> str:
    return hashlib.sha256(f"{workspace_id}\x1f{text}".encode()).hexdigest()


def _unpack(blob: bytes) -> Vector:
    values = array("f")
    values.frombytes(blob)
    return values.tolist()


class EmbeddingCache:
    """Vectors in a small SQLite file (separate from the store, so it survives a store reset): the
    embedded store's ``VectorCache``."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._db = LazyConnection(self._open)
        self._disabled = False  # damaged and still used by another process: run without a cache

    def _open(self) -> sqlite3.Connection:
        make_private(self._path)
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            if not is_damaged(exc):
                raise
            # A cache can always be rebuilt: keep the damaged file for inspection and start afresh,
            # unless another process still has it open (never move a file from under SQLite).
            aside = set_aside(self._path)
            if aside is None:
                self._disabled = True
                logger.warning("embedding cache is damaged and in use elsewhere; running without it")
                raise
            logger.warning(
                "embedding cache is damaged; starting a new one", extra={"reason": str(exc), "kept": str(aside)}
            )
            make_private(self._path)
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None, timeout=30.0)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS embeddings (model_id TEXT NOT NULL, text_sha256 TEXT NOT NULL, "
                "vector BLOB NOT NULL, PRIMARY KEY (model_id, text_sha256)) WITHOUT ROWID"
            )
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def _usable(self) -> sqlite3.Connection | None:
        """The connection, or None once the file proved damaged and held elsewhere."""
        if self._disabled:
            return None
        try:
            return self._db.get()
        except sqlite3.DatabaseError:
            if self._disabled:
                return None
            raise

    def get_many(self, model_id: str, workspace_id: str, texts: Sequence[str]) -> dict[str, Vector]:
        """Cached vectors of the workspace, by ``text_key``, for the texts that have one."""
        keys = {_stored_key(workspace_id, t): text_key(t) for t in texts}
        stored = list(keys)
        found: dict[str, Vector] = {}
        with self._lock:
            if (conn := self._usable()) is None:
                return found
            for start in range(0, len(stored), 500):
                batch = stored[start : start + 500]
                rows = conn.execute(
                    f"SELECT text_sha256, vector FROM embeddings WHERE model_id = ? AND text_sha256 IN "
                    f"({', '.join('?' * len(batch))})",
                    (model_id, *batch),
                )
                found.update((keys[key], _unpack(blob)) for key, blob in rows)
        return found

    def put_many(self, model_id: str, workspace_id: str, items: Sequence[tuple[str, Vector]]) -> None:
        """Store vectors of the workspace's texts (an existing entry is kept: same model, same text, same vector)."""
        with self._lock:
            if (conn := self._usable()) is None:
                return
            # One transaction: in autocommit each row was a commit of its own, and a bulk batch's
            # 200 vectors held this lock (and every other workspace's cache lookup) for 190 ms.
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR IGNORE INTO embeddings (model_id, text_sha256, vector) VALUES (?, ?, ?)",
                    [(model_id, _stored_key(workspace_id, text), array("f", v).tobytes()) for text, v in items],
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()
