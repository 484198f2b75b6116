"""``neural-memory check``: what an operator of an embedded database wants to know before
trusting a data folder — each database's integrity, the schema version, the saved mirror against
the database (rebuilt when stale or damaged), and whether any file is open to other users.

Read-only towards the databases except for the mirror snapshot it rebuilds (its own file, saved
atomically), so it is safe beside a running server."""

from __future__ import annotations

import sqlite3
import stat
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.stores.sqlite.backup import CACHE_FILE, KEY_FILE, STORE_FILE
from neural_memory.stores.sqlite.db import SCHEMA_VERSION, read_model
from neural_memory.stores.sqlite.files import connect_read_only, holders_path, integrity, is_damaged

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(frozen=True)
class Finding:
    """One line of the report: what was checked, whether it is fine, and what was seen."""

    what: str
    ok: bool
    detail: str


def _integrity(path: Path) -> Finding:
    try:
        with closing(connect_read_only(path)) as conn:
            verdict = integrity(conn)
    except sqlite3.DatabaseError as exc:
        if not is_damaged(exc):
            raise
        verdict = str(exc)
    return Finding(f"{path.name} integrity", verdict == "ok", verdict)


def _schema(path: Path) -> Finding:
    with closing(connect_read_only(path)) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    found = int(row[0]) if row else None
    if found is None:
        return Finding("schema version", False, "missing: not a neural-memory database")
    if found > SCHEMA_VERSION:
        return Finding("schema version", False, f"{found}, newer than this version reads ({SCHEMA_VERSION})")
    return Finding("schema version", True, str(found))


def _model(path: Path) -> Finding:
    """Which model the vectors are of, and a reindex under way (informational: both are fine)."""
    with closing(connect_read_only(path)) as conn:
        built, pending = read_model(conn), read_model(conn, "reindex_")
    detail = "none recorded (no vectors yet)" if built is None else f"{built[0]} ({built[1]} dimensions)"
    if pending is not None:
        detail += f"; a reindex to {pending[0]} is under way: `neural-memory reindex` finishes it"
    return Finding("model", True, detail)


def _mirror(data_dir: Path) -> Finding:
    from neural_memory.stores.sqlite.store import SqliteStore  # numpy: only once the file checks

    store = SqliteStore(data_dir / STORE_FILE)
    try:
        state, generation = store.refresh_snapshot()
    finally:
        store.close()
    detail = {
        "current": f"current (generation {generation})",
        "stale": f"stale, rebuilt at generation {generation} (normal while a server runs: it saves on exit)",
        "absent": f"absent, built at generation {generation}",
        "damaged": f"damaged, rebuilt at generation {generation}",
    }[state]
    return Finding("saved mirror", state != "damaged", detail)


def _loose_files(data_dir: Path) -> dict[Path, int]:
    """The folder itself and its files (its databases with their -wal/-shm, the key file, the saved
    mirror, the holders locks) that other users may read or write, with their modes. The folder
    counts like a file: whoever may write it may delete or replace the database, whoever may list
    it sees what it holds."""
    names = [STORE_FILE, CACHE_FILE, KEY_FILE, f"{STORE_FILE.rsplit('.', 1)[0]}.mirror.npz"]
    paths = [data_dir, *(data_dir / name for name in names)]
    paths += [data_dir / f"{name}{suffix}" for name in (STORE_FILE, CACHE_FILE) for suffix in ("-wal", "-shm")]
    paths += [holders_path(data_dir / name) for name in (STORE_FILE, CACHE_FILE)]
    loose = {}
    for path in paths:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            continue
        if mode & 0o077:
            loose[path] = mode
    return loose


def _modes(before: dict[Path, int]) -> Finding:
    """Files found open to others; a database this check opened first was tightened by that open
    (``files.make_private``), the others need the operator."""
    if not before:
        return Finding("file modes", True, "the folder (0700) and every file (0600) are private")
    named = []
    for path, mode in before.items():
        now = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0
        what = f"the folder {path}" if path.is_dir() else path.name
        named.append(f"{what} ({mode:04o}{', tightened now' if not now & 0o077 else ''})")
    fixes = []
    if any(path.is_dir() for path in before):
        fixes.append(f"chmod 700 {next(path for path in before if path.is_dir())}")
    if any(not path.is_dir() and stat.S_IMODE(path.stat().st_mode) & 0o077 for path in before if path.exists()):
        fixes.append("chmod 600 the files still open while no process uses the folder")
    return Finding("file modes", False, f"open to other users: {', '.join(named)}; {'; '.join(fixes)}")


def check(data_dir: Path) -> list[Finding]:
    """The findings for the data folder (any not ``ok`` makes ``neural-memory check`` exit 1)."""
    store = data_dir / STORE_FILE
    if not store.exists():
        return [Finding(STORE_FILE, False, f"no database in {data_dir}")]
    loose = _loose_files(data_dir)  # as found, before this check's own open tightens the database
    findings = [_integrity(store)]
    if findings[0].ok:
        findings.append(schema := _schema(store))
        if schema.ok:  # rebuilding the mirror opens the store, which an unknown schema must not be
            findings += [_model(store), _mirror(data_dir)]
    if (data_dir / CACHE_FILE).exists():
        findings.append(_integrity(data_dir / CACHE_FILE))
    return [*findings, _modes(loose)]
