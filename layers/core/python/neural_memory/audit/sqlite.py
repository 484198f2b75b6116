"""The audit trail of the embedded store: the ``audit`` table of the store's own file, written
through a connection of its own with the store's ``synchronous`` (``full`` by default: a commit is
on disk before the call it records is answered)."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from neural_memory.audit.trail import AuditEntry
from neural_memory.clock import from_ms, to_ms
from neural_memory.stores.sqlite.db import Synchronous, connect
from neural_memory.stores.sqlite.files import LazyConnection

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence
    from pathlib import Path

    from neural_memory.models.audit import AuditQuery

# Created on the first write (and read), so a file made by an earlier version gains it.
_TABLE = """
CREATE TABLE IF NOT EXISTS audit (
    id TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    key_name TEXT NOT NULL,
    action TEXT NOT NULL,
    ids TEXT NOT NULL,
    count INTEGER NOT NULL,
    request_id TEXT,
    PRIMARY KEY (workspace_id, id)
) WITHOUT ROWID;
"""


class SqliteAuditLog:
    """``AuditLog`` over the ``audit`` table of ``path`` (the embedded store's file)."""

    def __init__(self, path: Path, synchronous: Synchronous = "full") -> None:
        self._lock = threading.Lock()
        self._db = LazyConnection(lambda: self._open(path, synchronous))

    @staticmethod
    def _open(path: Path, synchronous: Synchronous) -> sqlite3.Connection:
        conn = connect(path, synchronous)
        conn.executescript(_TABLE)
        return conn

    def record(self, workspace_id: str, entries: Sequence[AuditEntry]) -> None:
        if not entries:
            return
        rows = [
            (e.id, workspace_id, to_ms(e.at), e.key, e.action, json.dumps(e.ids), e.count, e.request_id)
            for e in entries
        ]
        with self._lock:
            self._db.get().executemany(
                "INSERT INTO audit (id, workspace_id, at, key_name, action, ids, count, request_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def read(self, workspace_id: str, query: AuditQuery) -> list[AuditEntry]:
        clauses, params = ["workspace_id = ?"], list[object]([workspace_id])
        for clause, value in (
            ("key_name = ?", query.key),
            ("action = ?", query.action),
            ("at >= ?", None if query.start is None else to_ms(query.start)),
            ("at <= ?", None if query.end is None else to_ms(query.end)),
            ("id < ?", query.cursor),
        ):
            if value is not None:
                clauses.append(clause)
                params.append(value)
        with self._lock:
            rows = (
                self._db.get()
                .execute(
                    "SELECT id, at, key_name, action, ids, count, request_id FROM audit "
                    f"WHERE {' AND '.join(clauses)} ORDER BY id DESC LIMIT ?",
                    [*params, query.limit],
                )
                .fetchall()
            )
        return [_entry(row) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _entry(row: Sequence[Any]) -> AuditEntry:
    return AuditEntry(
        id=row[0],
        at=from_ms(row[1]),
        key=row[2],
        action=row[3],
        ids=json.loads(row[4]),
        count=row[5],
        request_id=row[6],
    )
