"""``neural-memory purge``: expired observations deleted now."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.local.cli.common import cli_settings

if TYPE_CHECKING:
    import argparse


def cmd_purge(args: argparse.Namespace) -> int:
    """Delete expired observations (C tier, 7 days after they occurred) from the store."""
    from neural_memory.clock import utcnow
    from neural_memory.service import build_service

    purged = build_service(cli_settings(args)).purge_expired(utcnow())
    print(f"purged {purged} expired observations")
    return 0
