"""``neural-memory dlq replay``: events the ingest queue gave up on, indexed again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.local.cli.common import progress_bar

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands


def cmd_dlq_replay(args: argparse.Namespace) -> int:
    """Move dead-lettered ingest messages back to the ingest queue (AWS credentials needed)."""
    from neural_memory.local.ingest.dlq import redrive

    with progress_bar(args.limit or 0, "msg", "replaying") as bar:
        moved = redrive(args.dlq_url, args.queue_url, limit=args.limit, progress=bar.update)
    print(f"moved {moved} messages from the dead-letter queue back to the ingest queue")
    return 0


def register(commands: Commands) -> None:
    """``dlq-replay``."""
    dlq = commands.add_parser("dlq-replay", help="AWS: move dead-lettered ingest messages back to the queue")
    dlq.add_argument("--dlq-url", required=True, help="the dead-letter queue's URL (stack output)")
    dlq.add_argument("--queue-url", required=True, help="the ingest queue's URL to move the messages back to")
    dlq.add_argument("--limit", type=int, help="at most this many messages (default: all)")
    dlq.set_defaults(func=cmd_dlq_replay)
