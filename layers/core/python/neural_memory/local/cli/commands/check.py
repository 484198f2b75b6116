"""``neural-memory check``: is this data folder sound? One line per finding, exit 0 or 1 for scripts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.local.cli.common import folder_of
from neural_memory.local.cli.flags import folder

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands


def cmd_check(args: argparse.Namespace) -> int:
    """Integrity, schema version, the saved mirror and file modes (``stores/sqlite/check.py``)."""
    from neural_memory.stores.sqlite.check import check

    findings = check(folder_of(args))
    for finding in findings:
        print(f"{'ok  ' if finding.ok else 'FAIL'}  {finding.what}: {finding.detail}")
    return 0 if all(f.ok for f in findings) else 1


def register(commands: Commands) -> None:
    """``check``: the data folder only."""
    check = commands.add_parser("check", help="integrity, schema, saved index and file modes; exit 1 on a problem")
    folder(check)
    check.set_defaults(func=cmd_check)
