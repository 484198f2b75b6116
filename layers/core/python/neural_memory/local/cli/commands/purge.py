"""``neural-memory purge``: the maintenance the AWS stack runs daily, now: expired observations
deleted, old E observations archived."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.local.cli.common import cli_settings
from neural_memory.local.cli.flags import data_dir

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands


def cmd_purge(args: argparse.Namespace) -> int:
    """The daily maintenance, now: C observations past their window lose their vectors (or, with
    ``NM_COLLABORATIVE_AFTER_WINDOW=delete``, are deleted), E observations older than
    ``NM_ARCHIVE_EXECUTION_AFTER_DAYS`` are archived."""
    from neural_memory.clock import utcnow
    from neural_memory.runtime import build_service

    done = build_service(cli_settings(args)).maintain(utcnow())
    print(
        f"purged {done['purged']} expired observations; archived {done['archived']} E observations; "
        f"{done['unembedded']} kept without their vectors"
    )
    return 0


def register(commands: Commands) -> None:
    """``purge``: the store's flags only."""
    purge = commands.add_parser(
        "purge",
        help="the daily maintenance: C past its window loses its vectors (or goes, under "
        "NM_COLLABORATIVE_AFTER_WINDOW=delete), old E is archived",
    )
    data_dir(purge)
    purge.set_defaults(func=cmd_purge)
