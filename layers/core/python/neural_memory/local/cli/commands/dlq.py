"""``neural-memory dlq replay``: events the ingest queue gave up on, indexed again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.local.cli.common import progress_bar

if TYPE_CHECKING:
    import argparse


def cmd_dlq_replay(args: argparse.Namespace) -> int:
    """Move dead-lettered ingest messages back to the ingest queue (AWS credentials needed)."""
    from neural_memory.local.ingest.dlq import redrive

    with progress_bar(args.limit or 0, "msg", "replaying") as bar:
        moved = redrive(args.dlq_url, args.queue_url, limit=args.limit, progress=bar.update)
    print(f"moved {moved} messages from the dead-letter queue back to the ingest queue")
    return 0
