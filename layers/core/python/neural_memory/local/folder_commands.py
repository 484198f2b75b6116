"""``neural-memory backup``, ``restore`` and ``check``: the operator's commands over a data folder
(the embedded store), safe beside running servers (``stores/sqlite_backup.py``, ``sqlite_check.py``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable


def _data_dir(args: argparse.Namespace) -> Path:
    """The folder from ``--data-dir``, else the settings' (``NM_DATA_DIR``)."""
    if args.data_dir:
        return Path(args.data_dir)
    from neural_memory.settings import Settings

    return Settings().data_dir


def _pages_bar() -> tuple[Callable[[str, int, int], None], Callable[[], None]]:
    """A progress bar per database copied (pages), on standard error."""
    from tqdm import tqdm

    bars: dict[str, Any] = {}

    def progress(name: str, done: int, total: int) -> None:
        bar = bars.get(name)
        if bar is None:
            bar = bars[name] = tqdm(total=total, unit="page", desc=name, file=sys.stderr, disable=None)
        bar.total = total
        bar.update(done - bar.n)

    def close() -> None:
        for bar in bars.values():
            bar.close()

    return progress, close


def cmd_backup(args: argparse.Namespace) -> int:
    """A consistent copy of the data folder into DEST while servers keep running."""
    from neural_memory.stores.sqlite_backup import BackupError, backup

    data_dir, destination = _data_dir(args), Path(args.destination)
    progress, close = _pages_bar()
    try:
        copied = backup(data_dir, destination, progress)
    except BackupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        close()
    print(f"backed up {data_dir} into {destination}: " + ", ".join(f"{c.name} ({c.pages} pages)" for c in copied))
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """Replace the data folder's databases with a backup (refused while a process uses the folder)."""
    from neural_memory.stores.sqlite_backup import BackupError, restore
    from neural_memory.stores.sqlite_db import FolderInUse

    source, data_dir = Path(args.source), _data_dir(args)
    progress, close = _pages_bar()
    try:
        copied = restore(source, data_dir, progress)
    except FolderInUse as exc:
        print(f"error: not restored: {exc}", file=sys.stderr)
        return 1
    except BackupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        close()
    print(f"restored {data_dir} from {source}: " + ", ".join(f"{c.name} ({c.pages} pages)" for c in copied))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Integrity, schema version, the saved mirror and file modes; exit 1 if anything is wrong."""
    from neural_memory.stores.sqlite_check import check

    findings = check(_data_dir(args))
    for finding in findings:
        print(f"{'ok  ' if finding.ok else 'FAIL'}  {finding.what}: {finding.detail}")
    return 0 if all(f.ok for f in findings) else 1


def _folder_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", help="the embedded store's folder (env NM_DATA_DIR, default .neural-memory)")


def add_parsers(commands: Any) -> None:
    """The three commands, on the CLI's subparsers."""
    data_dir = _folder_flag
    backup = commands.add_parser("backup", help="copy the data folder into DEST, consistent while servers run")
    backup.add_argument("destination", metavar="DEST", help="a new (or empty) folder for the copy")
    data_dir(backup)
    backup.set_defaults(func=cmd_backup)
    restore = commands.add_parser("restore", help="replace the data folder with a backup (no process may use it)")
    restore.add_argument("source", metavar="SRC", help="a folder `neural-memory backup` made")
    data_dir(restore)
    restore.set_defaults(func=cmd_restore)
    check = commands.add_parser("check", help="integrity, schema, saved index and file modes; exit 1 on a problem")
    data_dir(check)
    check.set_defaults(func=cmd_check)
