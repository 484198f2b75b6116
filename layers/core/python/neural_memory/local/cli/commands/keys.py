"""``neural-memory keys create|revoke``: API keys of the embedded key store."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import cli_settings

if TYPE_CHECKING:
    import argparse


def cmd_keys_create(args: argparse.Namespace) -> int:
    """Create an API key for a workspace; the key is the last line printed."""
    from neural_memory.auth.factory import build_key_store
    from neural_memory.auth.keys import issue_key
    from neural_memory.clock import utcnow

    settings = cli_settings(args)
    try:
        key = issue_key(build_key_store(settings), args.workspace, utcnow())
    except ValueError as exc:
        print(f"error: --workspace: {exc}", file=sys.stderr)
        return 2
    print(f"API key for workspace {args.workspace!r} (shown once; only its hash is stored):")
    print(key)
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    """Revoke an API key (read from standard input when KEY is ``-``, so it stays out of shell history)."""
    from neural_memory.auth.factory import build_key_store
    from neural_memory.auth.keys import revoke
    from neural_memory.clock import utcnow

    key = sys.stdin.readline().strip() if args.key == "-" else args.key
    if not revoke(build_key_store(cli_settings(args)), key, utcnow()):
        print("error: no such key, or it is already revoked", file=sys.stderr)
        return 1
    print("revoked")
    return 0
