"""``neural-memory backup DEST``: a consistent copy of the data folder while servers keep writing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import folder_of, pages_progress

if TYPE_CHECKING:
    import argparse


def cmd_backup(args: argparse.Namespace) -> int:
    """Copy the data folder's databases and key file into DEST (``stores/sqlite/backup.py``)."""
    from neural_memory.stores.sqlite.backup import BackupError, backup

    data_dir, destination = folder_of(args), Path(args.destination)
    progress, close = pages_progress()
    try:
        copied = backup(data_dir, destination, progress)
    except BackupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        close()
    print(f"backed up {data_dir} into {destination}: " + ", ".join(f"{c.name} ({c.pages} pages)" for c in copied))
    return 0
