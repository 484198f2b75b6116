"""Wiping what rewritten or deleted text leaves in the embedded store's files (``scrub``): FTS5
keeps a deleted row's tokens in its segments until they merge, SQLite keeps freed pages as they
were, the WAL keeps the pages it logged, and the saved in-memory index was made from the old text.
So: the full-text index merged into one segment, the file rebuilt (``VACUUM``), the WAL
checkpointed and truncated, the saved index deleted (the next process rebuilds it). Needs the
folder to itself, as ``restore`` does."""

from __future__ import annotations

import contextlib
import sqlite3
from typing import TYPE_CHECKING

from neural_memory.stores.sqlite.files import exclusively, release
from neural_memory.stores.sqlite.snapshot import snapshot_path

if TYPE_CHECKING:
    from pathlib import Path


def compact(database: Path) -> None:
    """Rewrite ``database``'s files from what it holds now; ``FolderInUse`` if another process uses it.
    The caller has closed its own connections."""
    release(database)
    with exclusively(database):
        with contextlib.closing(sqlite3.connect(database, isolation_level=None)) as conn:
            conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        saved = snapshot_path(database)
        saved.unlink(missing_ok=True)
        for partitions in saved.parent.glob(f"{saved.stem}.*.faiss"):
            partitions.unlink(missing_ok=True)
