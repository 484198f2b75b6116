"""What the commands share: the settings from flags and environment, progress bars and Ctrl-C."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterator, Sequence

    from neural_memory.settings import Settings
    from neural_memory.stores.sqlite.backup import Copied


def cli_settings(args: argparse.Namespace) -> Settings:
    """Settings from the environment, with command-line flags taking precedence."""
    from neural_memory.settings import Settings

    overrides: dict[str, Any] = {}
    if getattr(args, "data_dir", None):
        overrides["data_dir"] = Path(args.data_dir)
    if getattr(args, "embedder", None):
        overrides["embedder"] = args.embedder
    if getattr(args, "store", None):
        overrides["store"] = args.store
    if getattr(args, "opensearch_url", None):
        overrides["opensearch_url"] = args.opensearch_url
    if getattr(args, "concurrency", None) is not None:
        overrides["serve_concurrency"] = args.concurrency
    if args.command == "serve":
        overrides.setdefault("documents_yield_to_queries", True)  # an ingest never holds up a search
        from neural_memory.ingest.routing import load_routes

        if routes := load_routes(Path(args.routes)):  # webhooks and bus events name their workspace by these
            overrides["ingest_routes"] = {**Settings().ingest_routes, **routes}
    return Settings(**overrides)


LOG_FILE = "neural-memory.log"


def logs_to_file() -> str:
    """Send this command's log lines to ``neural-memory.log`` in the hooks' state folder
    (``~/.local/state/neural-memory``), not the terminal: what the command prints is its answer
    (``--verbose`` keeps them on standard error). The file's path."""
    import os

    from neural_memory.local.agents.hook_state import state_dir
    from neural_memory.observability import logger

    folder = state_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, LOG_FILE)
    stream = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the process's life, as stderr is
    for handler in logger.handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            handler.setStream(stream)
    return path


def find_memory(args: argparse.Namespace) -> str:
    """The workspace a reading command uses, filling in ``args.data_dir``: ``--workspace`` (in
    ``--data-dir`` or ``NM_DATA_DIR``), else the memory of the repository the command runs in, when
    it has one (made by ``import git`` or ``agents install``), else ``demo``."""
    if getattr(args, "workspace", None):
        return str(args.workspace)
    from neural_memory.local.agents.repository_memory import repository_memory

    memory = repository_memory(Path.cwd(), getattr(args, "data_dir", None))
    if memory is not None and memory.exists():
        args.data_dir = str(memory.data_dir)
        args.workspace = memory.workspace
        return memory.workspace
    return "demo"


# How far a bulk command steps back: serve's document threads run at the same nice value.
BULK_NICE = 10


@contextlib.contextmanager
def yielding_to_servers() -> Iterator[None]:
    """The calling thread, and the threads and processes it starts meanwhile, at a lower CPU
    priority (nice ``BULK_NICE``) so that a server's requests on the machine go first; restored
    after where the OS allows it (raising a priority again needs privileges). Linux only (its
    nice value is per thread); elsewhere nothing changes."""
    if sys.platform != "linux":
        yield
        return
    thread = threading.get_native_id()
    before = os.getpriority(os.PRIO_PROCESS, thread)
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, thread, max(before, BULK_NICE))
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, thread, before)


def progress_bar(total: int, unit: str, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, disable=None)


def interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def folder_of(args: argparse.Namespace) -> Path:
    """The data folder from ``--data-dir``, else the settings' (``NM_DATA_DIR``)."""
    if args.data_dir:
        return Path(args.data_dir)
    from neural_memory.settings import Settings

    return Settings().data_dir


def copy_databases(copy: Callable[[Callable[[str, int, int], None]], Sequence[Copied]], done: str) -> int:
    """Run a backup or restore with a progress bar per database (in pages) on standard error;
    print what was copied after ``done``, or the reason it was refused (exit 1)."""
    from neural_memory.stores.sqlite.backup import BackupError
    from neural_memory.stores.sqlite.files import FolderInUse

    bars: dict[str, Any] = {}

    def progress(name: str, copied: int, total: int) -> None:
        bar = bars.get(name)
        if bar is None:
            bar = bars[name] = progress_bar(total, "page", name)
        bar.total = total
        bar.update(copied - bar.n)

    try:
        databases = copy(progress)
    except (BackupError, FolderInUse) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        for bar in bars.values():
            bar.close()
    print(f"{done}: " + ", ".join(f"{c.name} ({c.pages} pages)" for c in databases))
    return 0
