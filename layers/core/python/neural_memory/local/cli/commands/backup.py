"""``neural-memory backup DEST``: a consistent copy of the data folder while servers keep writing."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import copy_databases, folder_of
from neural_memory.local.cli.flags import folder

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands


def cmd_backup(args: argparse.Namespace) -> int:
    """Copy the data folder's databases and key file into DEST (``stores/sqlite/backup.py``)."""
    from neural_memory.stores.sqlite.backup import backup

    data_dir, destination = folder_of(args), Path(args.destination)
    return copy_databases(
        lambda progress: backup(data_dir, destination, progress), f"backed up {data_dir} into {destination}"
    )


def register(commands: Commands) -> None:
    """``backup DEST``."""
    backup = commands.add_parser("backup", help="copy the data folder into DEST, consistent while servers run")
    backup.add_argument("destination", metavar="DEST", help="a new (or empty) folder for the copy")
    folder(backup)
    backup.set_defaults(func=cmd_backup)
