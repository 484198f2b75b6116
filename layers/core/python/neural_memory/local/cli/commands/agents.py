"""``neural-memory agents install|uninstall|status claude-code``: the memory in a project's Claude
Code configuration (MCP server, hooks, key), ``agents/claude_code.py``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse


def cmd_agents_install(args: argparse.Namespace) -> int:
    """Write the MCP server and hooks into ``--project`` for an API (``--url``) or the embedded store."""
    from neural_memory.agents.claude_code import Target, install

    project = Path(args.project).resolve()
    if not project.is_dir():
        print(f"error: --project: {project} is not a folder", file=sys.stderr)
        return 2
    if bool(args.url) == bool(args.data_dir):
        print(
            "error: give either --url (a running API) or --data-dir and --workspace (the embedded store)",
            file=sys.stderr,
        )
        return 2
    if args.data_dir and not args.workspace:
        print(
            "error: --workspace is needed with --data-dir (the agent's memories go to a workspace of their own)",
            file=sys.stderr,
        )
        return 2
    if args.url and args.workspace:
        print("error: --workspace: a running API's key names the workspace", file=sys.stderr)
        return 2
    if args.data_dir and args.key:
        print("error: --key: the embedded store's hooks get a key issued for --workspace", file=sys.stderr)
        return 2
    if args.data_dir and args.mcp == "http":
        print("error: --mcp http: the embedded store has no /mcp; its MCP server is a local process", file=sys.stderr)
        return 2
    target = (
        Target(url=args.url.rstrip("/"), http_mcp=_http_mcp(args.url.rstrip("/"), args.key, args.mcp))
        if args.url
        else Target(data_dir=Path(args.data_dir).resolve(), workspace=args.workspace)
    )
    try:
        changes = install(project, target, args.key, args.budget_tokens)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"Claude Code in {project}:")
    for line in changes.lines():
        print(f"  {line}")
    if args.url and not args.key and not os.environ.get("NM_API_KEY"):
        print("  note: NM_API_KEY is not set here: set it where Claude Code starts, or install again with --key")
    print("  `neural-memory agents status claude-code --project DIR` checks that the memory answers")
    return 0


def _http_mcp(url: str, key: str | None, choice: str) -> bool:
    """Whether Claude Code reaches the API's own ``/mcp`` (``--mcp auto``: when the API serves it,
    asked once with the key) rather than a local ``neural-memory mcp`` process."""
    if choice != "auto":
        return choice == "http"
    from neural_memory.agents.memory_client import serves_mcp

    return serves_mcp(url, key or os.environ.get("NM_API_KEY"), timeout=10)


def cmd_agents_uninstall(args: argparse.Namespace) -> int:
    """Remove exactly what ``agents install`` wrote into ``--project``."""
    from neural_memory.agents.claude_code import uninstall

    project = Path(args.project).resolve()
    try:
        changes = uninstall(project)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"Claude Code in {project}:")
    for line in changes.lines() or ["nothing was installed"]:
        print(f"  {line}")
    return 0


def cmd_agents_status(args: argparse.Namespace) -> int:
    """What is installed in ``--project`` and whether the memory answers (exit 1 if not all is well)."""
    from neural_memory.agents.claude_code import status

    healthy, lines = status(Path(args.project).resolve(), os.environ.get("NM_API_KEY"))
    print("\n".join(lines))
    return 0 if healthy else 1
