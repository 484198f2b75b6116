"""``neural-memory restore SRC``: the data folder replaced by a backup, never under a running process."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import folder_of, pages_progress

if TYPE_CHECKING:
    import argparse


def cmd_restore(args: argparse.Namespace) -> int:
    """Replace the data folder's databases with a backup; exit 1 if a process uses the folder."""
    from neural_memory.stores.sqlite.backup import BackupError, restore
    from neural_memory.stores.sqlite.db import FolderInUse

    source, data_dir = Path(args.source), folder_of(args)
    progress, close = pages_progress()
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
