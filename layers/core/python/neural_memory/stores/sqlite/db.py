"""Opening the embedded SQLite database: one file, WAL, the schema created if absent (the
observations table's columns derived from ``ObservationRecord``; a column added to the model
later is added to an existing file on open)."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any, Literal

from neural_memory.domain.filters import metadata_terms
from neural_memory.domain.ids import recurrence_key
from neural_memory.domain.record_rules import CLAIM_TYPES
from neural_memory.errors import StoreModelMismatch
from neural_memory.stores.record_fields import RECORD_FIELDS, RecordField
from neural_memory.stores.sqlite.files import make_private

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
{observations}
CREATE INDEX IF NOT EXISTS observations_ws_occurred ON observations (workspace_id, occurred_at);
CREATE INDEX IF NOT EXISTS observations_expires ON observations (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    obs_pk INTEGER NOT NULL REFERENCES observations (pk) ON DELETE CASCADE,
    chunk_no INTEGER NOT NULL,
    text TEXT NOT NULL,
    model_id TEXT,
    embedding BLOB,
    lexical INTEGER NOT NULL DEFAULT 1,
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
CREATE TABLE IF NOT EXISTS chunk_vectors (
    chunk_rowid INTEGER PRIMARY KEY REFERENCES chunks (rowid) ON DELETE CASCADE,
    embedding BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS metadata_terms (
    obs_pk INTEGER NOT NULL REFERENCES observations (pk) ON DELETE CASCADE,
    term TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS metadata_terms_term ON metadata_terms (term, obs_pk);
CREATE INDEX IF NOT EXISTS metadata_terms_obs ON metadata_terms (obs_pk);
CREATE TABLE IF NOT EXISTS api_keys (
    key_id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER,
    name TEXT,
    role TEXT,
    last_used_at INTEGER
);
"""


# Indexes on columns a file made by an earlier version gains in ``_add_new_columns`` (so created
# after it). Partial: only the few superseding, superseded and stale observations are indexed.
_INDEXES_OF_ADDED_COLUMNS = """
CREATE INDEX IF NOT EXISTS observations_superseded ON observations (workspace_id) WHERE superseded_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS observations_superseding ON observations (workspace_id) WHERE supersedes IS NOT NULL;
CREATE INDEX IF NOT EXISTS observations_session ON observations (workspace_id, session_id, occurred_at)
    WHERE session_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS observations_stale ON observations (workspace_id) WHERE possibly_stale IS NOT NULL;
CREATE INDEX IF NOT EXISTS observations_recurrence ON observations (workspace_id, recurrence_key, occurred_at)
    WHERE recurrence_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS observations_unarchived_execution ON observations (occurred_at)
    WHERE tier = 'E' AND archived_at IS NULL;
CREATE INDEX IF NOT EXISTS observations_claims_v1 ON observations (workspace_id, occurred_at)
    WHERE {claims};
CREATE INDEX IF NOT EXISTS observations_created_by ON observations (workspace_id, created_by)
    WHERE created_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS observations_flagged ON observations (workspace_id) WHERE flags IS NOT NULL;
"""

# A claim naming code (``stores.base.CLAIM_TYPES``): the rows a push's staleness marks read, by
# the partial index above (``INDEXED BY`` needs the query to state its condition; change the
# types, change the index's version).
_CLAIM_TYPES_SQL = ", ".join(f"'{kind}'" for kind in CLAIM_TYPES)
CLAIMS_CONDITION = f"o.code_refs IS NOT NULL AND o.observation_type IN ({_CLAIM_TYPES_SQL})"
CLAIMS_INDEX = "observations_claims_v1"

_SQL_TYPES = {"time": "INTEGER", "integer": "INTEGER", "boolean": "INTEGER", "float": "REAL"}


def column_type(field: RecordField) -> str:
    """The SQLite type of a record field (text, keywords and JSON are TEXT)."""
    return _SQL_TYPES.get(field.kind, "TEXT")


def _observations_table() -> str:
    columns = ",\n    ".join(f"{f.name} {column_type(f)}" + ("" if f.nullable else " NOT NULL") for f in RECORD_FIELDS)
    return (
        "CREATE TABLE IF NOT EXISTS observations (\n    pk INTEGER PRIMARY KEY,\n    workspace_id TEXT NOT NULL,\n"
        f"    {columns},\n    UNIQUE (workspace_id, id)\n);"
    )


SCHEMA = _SCHEMA.format(observations=_observations_table())


def _add_new_columns(conn: sqlite3.Connection) -> None:
    """Columns of fields added to the model since the file was made (nullable: old rows have none),
    and the chunks' ``lexical`` flag (every chunk of an older file is searched both ways)."""
    present = {row[1] for row in conn.execute("PRAGMA table_info(observations)")}
    for field in RECORD_FIELDS:
        if field.name not in present:
            conn.execute(f"ALTER TABLE observations ADD COLUMN {field.name} {column_type(field)}")
    if present and "trust" not in present:
        # Stored before provenance (trust/team.py): what a key, the operator or the repository
        # itself wrote was the team's; GitHub's pull requests, issues and comments could be anyone's
        # (neither, until imported again).
        conn.execute(
            "UPDATE observations SET trust = 'team' WHERE NOT (source = 'github' "
            "AND coalesce(source_type, '') IN ('pull_request', 'issue', 'issue_comment'))"
        )
    if "lexical" not in {row[1] for row in conn.execute("PRAGMA table_info(chunks)")}:
        conn.execute("ALTER TABLE chunks ADD COLUMN lexical INTEGER NOT NULL DEFAULT 1")
    # A key's name and role (auth/roles.py): a key made before them has neither, and is a write
    # key named after its workspace.
    key_columns = {row[1] for row in conn.execute("PRAGMA table_info(api_keys)")}
    for column, kind in (("name", "TEXT"), ("role", "TEXT"), ("last_used_at", "INTEGER")):
        if column not in key_columns:
            conn.execute(f"ALTER TABLE api_keys ADD COLUMN {column} {kind}")


Synchronous = Literal["normal", "full"]
WRITE_CACHE_KIB = 64 * 1024  # the page cache of the write connection (``connect``)


def connect(path: Path, synchronous: Synchronous = "full") -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` in WAL mode with the schema in place.

    ``synchronous``: "full" syncs the WAL at every commit, so an acknowledged write survives
    power loss; "normal" only at checkpoints (it survives a killed process, not an OS crash).
    The connection may be shared across threads; callers serialise access with their own lock.
    """
    make_private(path)
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30.0)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {'FULL' if synchronous == 'full' else 'NORMAL'}")
    conn.execute("PRAGMA foreign_keys = ON")
    # A batch of 1000 observations dirties ~1000 leaf pages of each index with scattered keys
    # (occurrence time, recurrence key, session, FTS5 segments): past the default 2 MiB cache,
    # SQLite spills dirty pages to the WAL mid-transaction and writes them again, and reads
    # evicted ones back (at 100k, 3x the bytes written per observation). A bound, not an
    # allocation: pages are taken as a write needs them.
    conn.execute(f"PRAGMA cache_size = -{WRITE_CACHE_KIB}")
    conn.executescript(SCHEMA)
    _add_new_columns(conn)
    conn.executescript(
        _INDEXES_OF_ADDED_COLUMNS.format(claims=f"code_refs IS NOT NULL AND observation_type IN ({_CLAIM_TYPES_SQL})")
    )
    _fill_metadata_terms(conn)
    _fill_recurrence_keys(conn)
    _unmark_events(conn)
    _record_model(conn)
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO NOTHING",
        (str(SCHEMA_VERSION),),
    )
    conn.execute("INSERT INTO meta (key, value) VALUES ('generation', '0') ON CONFLICT (key) DO NOTHING")
    return conn


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction, if one is still open: a COMMIT that failed may have ended
    it already, and a second error would hide the first."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def write_metadata_terms(
    conn: sqlite3.Connection,
    pk: int,
    metadata: dict[str, Any],
    code_refs: Sequence[str] | None = None,
    *,
    suffixes: bool = False,
) -> None:
    """The observation's metadata and code refs as exact terms (``filters.metadata_terms``), for
    metadata filters and the observations a push touches."""
    rows = [(pk, term) for term in metadata_terms(metadata, code_refs, suffixes=suffixes)]
    if rows:  # most observations have none, and an empty executemany still costs ~0.15 ms
        conn.executemany("INSERT INTO metadata_terms (obs_pk, term) VALUES (?, ?)", rows)


def _unmark_events(conn: sqlite3.Connection) -> None:
    """Only claims go stale: clear the marks an earlier version put on events (pushes marked
    each other). A no-op once done (the partial index holds only marked rows)."""
    conn.execute(
        "UPDATE observations SET possibly_stale = NULL, stale_at = NULL "
        f"WHERE possibly_stale IS NOT NULL AND observation_type NOT IN ({_CLAIM_TYPES_SQL})"
    )


def _fill_metadata_terms(conn: sqlite3.Connection) -> None:
    """Once per file: the terms of observations written before the table existed."""
    if conn.execute("SELECT 1 FROM meta WHERE key = 'metadata_terms'").fetchone():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not conn.execute("SELECT 1 FROM meta WHERE key = 'metadata_terms'").fetchone():
            for pk, metadata in conn.execute("SELECT pk, metadata FROM observations").fetchall():
                write_metadata_terms(conn, int(pk), json.loads(metadata) if metadata else {})
            conn.execute("INSERT INTO meta (key, value) VALUES ('metadata_terms', '1')")
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def _fill_recurrence_keys(conn: sqlite3.Connection) -> None:
    """Once per file: the recurrence keys of E observations written before the tier lifecycle
    (the column added empty, or left empty by the first version that added it), so their content
    counts as occurring. One UPDATE inside SQLite, through ``ids.recurrence_key`` registered as an
    SQL function of this connection, so the keys are exactly those of new writes."""
    if conn.execute("SELECT 1 FROM meta WHERE key = 'recurrence_keys'").fetchone():
        return
    conn.create_function("nm_recurrence_key", 2, recurrence_key, deterministic=True)
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not conn.execute("SELECT 1 FROM meta WHERE key = 'recurrence_keys'").fetchone():
            conn.execute(
                "UPDATE observations SET recurrence_key = nm_recurrence_key(title, coalesce(content, '')) "
                "WHERE tier = 'E' AND recurrence_key IS NULL"
            )
            conn.execute("INSERT INTO meta (key, value) VALUES ('recurrence_keys', '1')")
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


Model = tuple[str, int]  # (model id, dimension): the vector space a store is built for


def read_model(conn: sqlite3.Connection, prefix: str = "") -> Model | None:
    """The model the store is built for (``meta.model_id`` and ``meta.dimension``), or with
    ``prefix="reindex_"`` the one a reindex under way builds it for; None if none is recorded."""
    rows = dict(
        conn.execute(
            "SELECT key, value FROM meta WHERE key IN (?, ?)", (f"{prefix}model_id", f"{prefix}dimension")
        ).fetchall()
    )
    if f"{prefix}model_id" not in rows:
        return None
    return str(rows[f"{prefix}model_id"]), int(rows[f"{prefix}dimension"])


def write_model(conn: sqlite3.Connection, model: Model | None, prefix: str = "") -> None:
    """Record (or, with None, forget) ``read_model``'s model, inside the caller's transaction."""
    conn.execute("DELETE FROM meta WHERE key IN (?, ?)", (f"{prefix}model_id", f"{prefix}dimension"))
    if model is not None:
        conn.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?)",
            [(f"{prefix}model_id", model[0]), (f"{prefix}dimension", str(model[1]))],
        )


def _record_model(conn: sqlite3.Connection) -> None:
    """Once per file made before stores recorded their model: the model most of its vectors
    carry is the one it was built by (a store that holds none adopts the first model that
    writes one; ``neural-memory reindex`` re-embeds any chunk of another model)."""
    if conn.execute("SELECT 1 FROM meta WHERE key IN ('model_id', 'model_recorded')").fetchone():
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not conn.execute("SELECT 1 FROM meta WHERE key IN ('model_id', 'model_recorded')").fetchone():
            row = conn.execute(
                "SELECT model_id, length(embedding) / 4 FROM chunks WHERE model_id IS NOT NULL "
                "GROUP BY model_id ORDER BY count(*) DESC LIMIT 1"
            ).fetchone()
            if row is not None:
                write_model(conn, (str(row[0]), int(row[1])))
            conn.execute("INSERT INTO meta (key, value) VALUES ('model_recorded', '1')")
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def model_mismatch(database: Path, built: Model, configured: Model, pending: Model | None = None) -> StoreModelMismatch:
    """The refusal of a process configured with another model than the store's, naming the command."""
    folder = database.parent
    under_way = (
        f"; a reindex for {pending[0]} is under way, and the same command finishes it" if pending is not None else ""
    )
    return StoreModelMismatch(
        f"the store in {folder} was built by the embedding model {built[0]} ({built[1]} dimensions), and this "
        f"process embeds with {configured[0]} ({configured[1]} dimensions): run `neural-memory reindex "
        f"--data-dir {folder}` with this configuration to rebuild it for {configured[0]} (searches keep "
        f"using {built[0]} until it finishes){under_way}; or configure {built[0]} again "
        "(NM_EMBEDDER=none searches any store by keyword)"
    )


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
