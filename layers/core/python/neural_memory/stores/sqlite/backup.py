"""Backup and restore of an embedded data folder, through SQLite's online backup API only.

A backup is a folder like the data folder: the store (observations and key hashes) and the
embedding cache, each a consistent copy taken from one read snapshot while servers keep writing
(WAL readers never block writers), and the demo key file. Restoring replaces a folder's files only
while no process uses it (``files.exclusively``), and moves the write generation past both
the old and the copied one, so no process or saved mirror can take the restored file for the one
it knew."""

from __future__ import annotations

import os
import sqlite3
from contextlib import ExitStack, closing
from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.stores.sqlite.db import connect
from neural_memory.stores.sqlite.files import connect_read_only, exclusively, integrity, make_private
from neural_memory.stores.sqlite.snapshot import snapshot_path

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

STORE_FILE = "neural-memory.sqlite3"
CACHE_FILE = "embedding-cache.sqlite3"
KEY_FILE = "demo-api-key"
PAGES_PER_STEP = 256  # 1 MiB at SQLite's 4 KiB pages: fine-grained progress, few steps


class BackupError(Exception):
    """A backup or restore that cannot be made, with the reason for the operator."""


@dataclass(frozen=True)
class Copied:
    """One database copied: its name and how many pages."""

    name: str
    pages: int


def _copy(
    source: sqlite3.Connection, target: sqlite3.Connection, name: str, progress: Callable[[str, int, int], None]
) -> int:
    """Copy ``source`` into ``target`` page by page from one read snapshot: the source's read
    transaction is held across the steps, so writes made meanwhile by other processes never
    restart the copy nor tear it."""
    source.execute("BEGIN")
    try:
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()  # starts the snapshot
        total = int(source.execute("PRAGMA page_count").fetchone()[0])
        progress(name, 0, total)
        source.backup(
            target, pages=PAGES_PER_STEP, progress=lambda _s, left, pages: progress(name, pages - left, pages)
        )
    finally:
        source.execute("COMMIT")
    return total


def _new_private_file(path: Path) -> None:
    """An empty file, mode 0600, that did not exist (so no connection holds it)."""
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def _copy_key_file(source: Path, target: Path) -> None:
    """The plain key file, written privately and swapped in whole."""
    temporary = target.with_name(f"{target.name}.tmp")
    with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
        handle.write(source.read_bytes())
    os.replace(temporary, target)


def backup(data_dir: Path, destination: Path, progress: Callable[[str, int, int], None]) -> list[Copied]:
    """Copy the data folder's databases (and key file) into ``destination``, a new or empty
    folder made private (0700, even one that existed); each copy is checked with ``PRAGMA integrity_check``."""
    store = data_dir / STORE_FILE
    if not store.exists():
        raise BackupError(f"no database in {data_dir} ({STORE_FILE})")
    if destination.exists() and any(destination.iterdir()):
        raise BackupError(f"{destination} is not empty: back up into a new folder")
    destination.mkdir(mode=0o700, parents=True, exist_ok=True)
    # An existing empty folder is made private too: it is about to hold every observation, and
    # whoever may write it could replace the copies (mkdir's mode applies to a new folder only).
    destination.chmod(0o700)
    copied = []
    for name in (STORE_FILE, CACHE_FILE):
        if not (data_dir / name).exists():
            continue
        _new_private_file(destination / name)
        with (
            closing(connect_read_only(data_dir / name)) as source,
            closing(sqlite3.connect(destination / name)) as target,
        ):
            pages = _copy(source, target, name, progress)
            if (verdict := integrity(target)) != "ok":
                raise BackupError(f"the copy of {name} does not check: {verdict}")
        copied.append(Copied(name, pages))
    if (data_dir / KEY_FILE).exists():
        _copy_key_file(data_dir / KEY_FILE, destination / KEY_FILE)
    return copied


def _generation(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0


def restore(source_dir: Path, data_dir: Path, progress: Callable[[str, int, int], None]) -> list[Copied]:
    """Replace the data folder's databases with the backup in ``source_dir``: refused
    (``files.FolderInUse``) while any process uses the folder; the backup is checked first."""
    if not (source_dir / STORE_FILE).exists():
        raise BackupError(f"no backup in {source_dir} ({STORE_FILE})")
    names = [name for name in (STORE_FILE, CACHE_FILE) if (source_dir / name).exists()]
    for name in names:
        with closing(connect_read_only(source_dir / name)) as source:
            if (verdict := integrity(source)) != "ok":
                raise BackupError(f"the backup's {name} does not check: {verdict}")
    with ExitStack() as held:
        for name in names:
            held.enter_context(exclusively(data_dir / name))
        # The saved mirror describes the old file: never let a generation match it by chance.
        snapshot = snapshot_path(data_dir / STORE_FILE)
        for stale in [snapshot, *data_dir.glob(f"{snapshot.stem}.*.faiss")]:
            stale.unlink(missing_ok=True)
        copied = []
        for name in names:
            target_path = data_dir / name
            existed = target_path.exists()
            if not existed:
                _new_private_file(target_path)
            with (
                closing(connect_read_only(source_dir / name)) as source,
                closing(sqlite3.connect(target_path)) as target,
            ):
                before = _generation(target) if existed and name == STORE_FILE else 0
                pages = _copy(source, target, name, progress)
                if name == STORE_FILE:
                    after = max(before, _generation(target)) + 1
                    target.execute("UPDATE meta SET value = ? WHERE key = 'generation'", (str(after),))
                    target.commit()
            copied.append(Copied(name, pages))
        if (source_dir / KEY_FILE).exists():
            _copy_key_file(source_dir / KEY_FILE, data_dir / KEY_FILE)
    # Opened once the usual way: an older backup gains the columns this version adds.
    make_private(data_dir / STORE_FILE)
    connect(data_dir / STORE_FILE).close()
    return copied
