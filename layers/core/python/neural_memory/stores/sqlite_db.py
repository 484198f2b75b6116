"""Opening the embedded SQLite database: one file, WAL, the schema created if absent."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS observations (
    pk INTEGER PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    id TEXT NOT NULL,
    source TEXT NOT NULL,
    source_type TEXT,
    observation_type TEXT NOT NULL,
    actor_name TEXT,
    occurred_at INTEGER NOT NULL,
    ingested_at INTEGER NOT NULL,
    expires_at INTEGER,
    tier TEXT NOT NULL,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    url TEXT,
    session_id TEXT,
    parent_id TEXT,
    metadata TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    UNIQUE (workspace_id, id)
);
CREATE INDEX IF NOT EXISTS observations_ws_occurred ON observations (workspace_id, occurred_at);
CREATE INDEX IF NOT EXISTS observations_expires ON observations (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    obs_pk INTEGER NOT NULL REFERENCES observations (pk) ON DELETE CASCADE,
    chunk_no INTEGER NOT NULL,
    text TEXT NOT NULL,
    model_id TEXT,
    embedding BLOB,
    UNIQUE (obs_pk, chunk_no)
);
CREATE INDEX IF NOT EXISTS chunks_model ON chunks (model_id) WHERE embedding IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (
    title, text, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab (chunks_fts, instance);
CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.rowid;
END;
CREATE TABLE IF NOT EXISTS api_keys (
    key_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
"""


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` in WAL mode with the schema in place.

    The connection may be shared across threads; callers serialise access with their own lock.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30.0)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.executescript(SCHEMA)
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO NOTHING",
        (str(SCHEMA_VERSION),),
    )
    conn.execute("INSERT INTO meta (key, value) VALUES ('generation', '0') ON CONFLICT (key) DO NOTHING")
    return conn


def bump_generation(conn: sqlite3.Connection) -> int:
    """Increment the write generation inside the current transaction and return the new value.

    Other processes compare it with what they loaded to notice that their in-memory index is stale.
    """
    row = conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation' RETURNING value"
    ).fetchone()
    return int(row[0])


def read_generation(conn: sqlite3.Connection) -> int:
    """The current write generation."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0])
