"""``neural-memory restore SRC``: the data folder replaced by a backup, never under a running process."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import copy_databases, folder_of
from neural_memory.local.cli.flags import folder

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands


def cmd_restore(args: argparse.Namespace) -> int:
    """Replace the data folder's databases with a backup; exit 1 if a process uses the folder."""
    from neural_memory.stores.sqlite.backup import restore

    source, data_dir = Path(args.source), folder_of(args)
    return copy_databases(lambda progress: restore(source, data_dir, progress), f"restored {data_dir} from {source}")


def register(commands: Commands) -> None:
    """``restore SRC``."""
    restore = commands.add_parser("restore", help="replace the data folder with a backup (no process may use it)")
    restore.add_argument("source", metavar="SRC", help="a folder `neural-memory backup` made")
    folder(restore)
    restore.set_defaults(func=cmd_restore)
