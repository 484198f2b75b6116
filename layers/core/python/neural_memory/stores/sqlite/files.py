"""The SQLite file mechanics every embedded database of ours shares (the store, the embedding
cache): a private folder and file, the holders lock by which a process says it uses a database (so
that ``restore`` may replace it only when none does), setting a damaged file aside, and connections
opened on first use, read-only or for one thread's reads."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path


SQLITE_CORRUPT, SQLITE_NOTADB = 11, 26  # primary result codes (extended codes keep them in the low byte)

# Database files this process has prepared (``make_private``): the modes are settled before the
# process's first connection to a file and never touched again while it may hold one. Each maps
# to the descriptor of the file's holders lock, kept open for the life of the process.
_PREPARED: dict[str, int] = {}
_PREPARED_LOCK = threading.Lock()


class FolderInUse(Exception):
    """Another process (or this one) holds the database: it may not be replaced now."""


def holders_path(path: Path) -> Path:
    """The lock file beside a database that every process using it holds shared (``hold``)."""
    return path.with_name(f"{path.name}.holders")


def _open_holders(path: Path) -> int:
    # A file of its own, never SQLite's: locking or closing it cannot touch SQLite's POSIX locks.
    return os.open(holders_path(path), os.O_CREAT | os.O_RDWR, 0o600)


# What a data folder of ours holds: the databases (with -wal, -shm, .holders), the key file, the
# saved mirror, the models, the backups, cursors and locks the commands keep.
_OWN_PREFIXES = ("neural-memory", "embedding-cache", "demo-api-key", "models", "backups", ".", "scrub", "import")


def _tighten_own_folder(folder: Path) -> None:
    """0700 for a folder open to others that this user owns and that holds only our files."""
    try:
        mode = folder.stat().st_mode
        if not mode & 0o077 or folder.stat().st_uid != os.getuid():
            return
        if all(name.startswith(_OWN_PREFIXES) for name in os.listdir(folder)):
            os.chmod(folder, 0o700)
    except OSError:
        return  # not ours to change: ``check`` names it


def make_private(path: Path) -> None:
    """Create the folder (0700) and the database file (0600) if absent, and tighten the file if it
    is open to others: observations are private, whoever else uses the machine. SQLite gives its
    -wal and -shm files the database file's mode. A folder that already exists is tightened to
    0700 too when it holds nothing but this folder's own files (made for it: ``mkdir DIR &&
    neural-memory keys create --data-dir DIR``, so that ``check`` passes on it); one holding
    anything else is the user's (``--data-dir /tmp``, say) and is left as it is: the files in it
    are private anyway.

    Never through a descriptor of a file SQLite may hold: POSIX locks belong to the process, and
    closing *any* descriptor of the file drops every lock its connections hold (SQLite's "How To
    Corrupt", 2.2) — another process then checkpoints and deletes the WAL under them. So the file
    is created with ``O_EXCL`` (it did not exist, so no connection holds it; an existing file
    opens no descriptor at all), and an existing file's mode is tightened by path (no descriptor)
    only before this process's first connection to it.

    The process also takes the database's holders lock, shared, for its lifetime, so that
    ``restore`` can tell that a process uses the folder and refuse to replace it under it."""
    key = os.path.realpath(path)
    with _PREPARED_LOCK:
        if key in _PREPARED:
            return
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _tighten_own_folder(path.parent)
        holders = _open_holders(path)
        try:
            fcntl.flock(holders, fcntl.LOCK_SH)  # waits while a restore replaces the files
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600))
            except FileExistsError:
                if path.stat().st_mode & 0o077:
                    os.chmod(path, 0o600)
        except BaseException:
            os.close(holders)
            raise
        _PREPARED[key] = holders


def release(path: Path) -> None:
    """This process stops holding the database (``make_private``'s lock), having closed its
    connections to it, so that it may take it ``exclusively`` itself."""
    with _PREPARED_LOCK:
        held = _PREPARED.pop(os.path.realpath(path), None)
    if held is not None:
        os.close(held)


@contextmanager
def exclusively(path: Path) -> Iterator[None]:
    """Hold the database alone while replacing its files (``restore``): ``FolderInUse`` if any
    process, this one included, uses it; processes starting meanwhile wait in ``make_private``."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if os.path.realpath(path) in _PREPARED:
        raise FolderInUse(f"not now: this process uses {path}")
    holders = _open_holders(path)
    try:
        try:
            fcntl.flock(holders, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderInUse(
                f"not now: a running process (serve, mcp, ingest, ...) uses {path}; stop it first"
            ) from None
        yield
    finally:
        os.close(holders)


def is_damaged(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite refused the file as damaged (corrupt, or not a database at all), as opposed
    to a busy or read-only one."""
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF in {SQLITE_CORRUPT, SQLITE_NOTADB}


def set_aside(path: Path) -> Path | None:
    """Move a damaged database (and its -wal/-shm) aside, kept for inspection, so a new one can
    start; only when no other process uses it (None then: it stays where it is). The caller has
    closed its own connections to it."""
    release(path)  # this process's own holders lock: SQLite's locks are not on that file
    try:
        with exclusively(path):
            aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
            for suffix in ("", "-wal", "-shm"):
                if (damaged := path.with_name(path.name + suffix)).exists():
                    damaged.replace(aside.with_name(aside.name + suffix))
            return aside
    except FolderInUse:
        return None


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that can neither create the file nor write to it (backups, checks)."""
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None, timeout=30.0)


def integrity(conn: sqlite3.Connection) -> str:
    """``PRAGMA integrity_check``'s verdict in one line ("ok" when the file is sound)."""
    return ", ".join(str(row[0]) for row in conn.execute("PRAGMA integrity_check"))


def connect_reader(path: Path) -> sqlite3.Connection:
    """A further connection to a database ``connect`` has set up, for one thread's reads."""
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30.0)
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


class LazyConnection:
    """A connection opened by ``opener`` on first use; after ``close()`` the next use reopens it.
    Not locked: its owner serialises access with its own lock."""

    def __init__(self, opener: Callable[[], sqlite3.Connection]) -> None:
        self._opener = opener
        self._conn: sqlite3.Connection | None = None

    def get(self) -> sqlite3.Connection:
        """The open connection."""
        if self._conn is None:
            self._conn = self._opener()
        return self._conn

    def is_open(self) -> bool:
        """Whether the connection is open now."""
        return self._conn is not None

    def close(self) -> None:
        """Close it if open."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
