"""API key records in the embedded SQLite file (hashes only)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from neural_memory.auth.base import KeyRecord
from neural_memory.clock import from_ms, to_ms
from neural_memory.stores.sqlite.db import LazyConnection, Synchronous, connect

if TYPE_CHECKING:
    import sqlite3
    from datetime import datetime
    from pathlib import Path


class SqliteKeyStore:
    """``KeyStore`` over the ``api_keys`` table."""

    def __init__(self, path: Path, synchronous: Synchronous = "full") -> None:
        self._path = path
        self._lock = threading.Lock()
        self._db = LazyConnection(lambda: connect(path, synchronous))

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._db.get()

    def put_key(self, record: KeyRecord) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO api_keys (key_id, workspace_id, secret_sha256, created_at) VALUES (?, ?, ?, ?)",
                (record.key_id, record.workspace_id, record.secret_sha256, to_ms(record.created_at)),
            )

    def find_key(self, key_id: str) -> KeyRecord | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT key_id, workspace_id, secret_sha256, created_at, revoked_at FROM api_keys WHERE key_id = ?",
                (key_id,),
            ).fetchone()
        if row is None:
            return None
        return KeyRecord(
            key_id=row[0],
            workspace_id=row[1],
            secret_sha256=row[2],
            created_at=from_ms(row[3]),
            revoked_at=None if row[4] is None else from_ms(row[4]),
        )

    def revoke_key(self, key_id: str, when: datetime) -> bool:
        with self._lock:
            cursor = self._conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL", (to_ms(when), key_id)
            )
            return cursor.rowcount > 0

    def has_keys(self, workspace_id: str) -> bool:
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM api_keys WHERE workspace_id = ? LIMIT 1", (workspace_id,))
            return row.fetchone() is not None

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()
