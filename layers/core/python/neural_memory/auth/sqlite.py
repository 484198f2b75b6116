"""API key records in the embedded SQLite file (hashes only)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from neural_memory.auth.base import KeyRecord
from neural_memory.auth.roles import LEGACY_ROLE, check_role
from neural_memory.clock import from_ms, to_ms
from neural_memory.stores.sqlite.db import Synchronous, connect
from neural_memory.stores.sqlite.files import LazyConnection

if TYPE_CHECKING:
    import sqlite3
    from datetime import datetime
    from pathlib import Path


_COLUMNS = "key_id, workspace_id, secret_sha256, created_at, revoked_at, name, role, last_used_at"


def _record(row: tuple[Any, ...]) -> KeyRecord:
    return KeyRecord(
        key_id=row[0],
        workspace_id=row[1],
        secret_sha256=row[2],
        created_at=from_ms(row[3]),
        revoked_at=None if row[4] is None else from_ms(row[4]),
        name=row[5],
        role=check_role(row[6]) if row[6] else LEGACY_ROLE,  # a key made before roles
        last_used_at=None if row[7] is None else from_ms(row[7]),
    )


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
                "INSERT INTO api_keys (key_id, workspace_id, secret_sha256, created_at, name, role) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    record.key_id,
                    record.workspace_id,
                    record.secret_sha256,
                    to_ms(record.created_at),
                    record.name,
                    record.role,
                ),
            )

    def find_key(self, key_id: str) -> KeyRecord | None:
        with self._lock:
            row = self._conn.execute(f"SELECT {_COLUMNS} FROM api_keys WHERE key_id = ?", (key_id,)).fetchone()
        return None if row is None else _record(row)

    def list_keys(self, workspace_id: str | None = None) -> list[KeyRecord]:
        where, params = ("WHERE workspace_id = ?", [workspace_id]) if workspace_id is not None else ("", [])
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_COLUMNS} FROM api_keys {where} ORDER BY created_at, key_id", params
            ).fetchall()
        return [_record(row) for row in rows]

    def touch_key(self, key_id: str, when: datetime) -> None:
        with self._lock:
            self._conn.execute("UPDATE api_keys SET last_used_at = ? WHERE key_id = ?", (to_ms(when), key_id))

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
