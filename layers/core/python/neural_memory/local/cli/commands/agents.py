"""``neural-memory agents install|uninstall|status claude-code``: the memory in a project's Claude
Code configuration (MCP server, hooks, key), ``agents/claude_code.py``."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neural_memory.local.agents.claude_code import Target
    from neural_memory.local.cli.flags import Commands


def cmd_agents_install(args: argparse.Namespace) -> int:
    """Write the MCP server and hooks into ``--project``: for an API (``--url``, or the one the
    committed files name: a teammate's install), the embedded store given (``--data-dir``), or the
    repository's own memory (no flag); bring the history in when asked, and say where the memory is."""
    from neural_memory.local.agents.claude_code import install

    project = Path(args.project).resolve()
    if not project.is_dir():
        print(f"error: --project: {project} is not a folder", file=sys.stderr)
        return 2
    target = _target(args, project)
    if isinstance(target, str):
        print(f"error: {target}", file=sys.stderr)
        return 2
    url = target.url
    try:
        changes = install(project, target, args.key, args.budget_tokens)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"Claude Code in {project}:")
    for line in changes.lines():
        print(f"  {line}")
    if url and not args.key and not os.environ.get("NM_API_KEY"):
        print("  note: NM_API_KEY is not set here: set it where Claude Code starts, or install again with --key")
    if not shutil.which("neural-memory-hook"):
        print("  note: neural-memory-hook is not on PATH: the hooks run it by name (activate the virtualenv)")
    code = _where_and_history(args, project, url)
    print("  `neural-memory agents status claude-code --project DIR` checks that the memory answers")
    return code


def _target(args: argparse.Namespace, project: Path) -> Target | str:
    """Where the install points: an API (``--url``, or the one the committed files name: a
    teammate's install, written as it is committed), the folder given, or the repository's own
    memory; a string saying what is wrong with the flags."""
    from neural_memory.local.agents.claude_code import Target, installed_target
    from neural_memory.local.agents.repository import read_repository, work_tree_root

    if args.url and args.data_dir:
        return "give either --url (a running API) or --data-dir and --workspace (the embedded store)"
    if bool(args.data_dir) != bool(args.workspace) and not args.url:
        return "--data-dir and --workspace go together (without both: the repository's own memory)"
    if args.url and args.workspace:
        return "--workspace: a running API's key names the workspace"
    if args.url:
        url = args.url.rstrip("/")
        repository = read_repository(project).name if work_tree_root(project) else None
        return Target(url=url, http_mcp=_http_mcp(url, args.key, args.mcp), repository=repository)
    committed = installed_target(project) if not args.data_dir else None
    if committed is not None and committed.url:  # as committed: the files stay byte for byte
        return Target(url=committed.url, http_mcp=committed.http_mcp, repository=committed.repository)
    if args.key:
        return "--key: the embedded store's hooks get a key of their own (give --url for an API)"
    if args.mcp == "http":
        return "--mcp http: the embedded store has no /mcp; its MCP server is a local process"
    return Target(data_dir=Path(args.data_dir).resolve() if args.data_dir else None, workspace=args.workspace)


def _where_and_history(args: argparse.Namespace, project: Path, url: str | None) -> int:
    """Say where the memory is; bring the repository's history in (``--import-history``, or asked
    on a terminal when the memory holds none); start the embedded store's background server now,
    so a first session's brief does not wait for it."""
    from neural_memory.local.agents.claude_code import embedded_memory, installed_target
    from neural_memory.local.agents.repository import work_tree_root

    root = work_tree_root(project)
    if url:
        print(f"  memory: the API at {url} (the key names the workspace)")
        history = ["--api-url", url] + (["--key", args.key] if args.key else [])
    else:
        target = installed_target(project)
        assert target is not None
        data_dir, workspace = embedded_memory(project, target)
        print(f"  memory: {data_dir}, workspace {workspace} (the CLI finds it from inside the repository)")
        history = ["--data-dir", str(data_dir), "--workspace", workspace]
    code = 0
    if root is not None:
        wanted = args.import_history
        if wanted is None and not url and not _imported(project):
            if sys.stdin.isatty():
                answer = input(f"  import {root.name}'s git history into it now? [Y/n] ").strip().lower()
                wanted = answer in ("", "y", "yes")
            else:
                print(
                    f"  history: not imported yet: `neural-memory import git {root}` (or install with --import-history)"
                )
        if wanted:
            from neural_memory.local.cli import main

            code = main(["import", "git", str(root), *history])
    if not url:
        from neural_memory.local.agents.local_server import ensure_server

        server, why = ensure_server(str(data_dir), time.monotonic() + 120)
        print(f"  background server: {server}" if server else f"  background server: not started ({why})")
    return code


def _imported(project: Path) -> bool:
    from neural_memory.local.agents.repository_memory import repository_memory

    memory = repository_memory(project)
    return memory is not None and memory.imported()


def _http_mcp(url: str, key: str | None, choice: str) -> bool:
    """Whether Claude Code reaches the API's own ``/mcp`` (``--mcp auto``: when the API serves it,
    asked once with the key) rather than a local ``neural-memory mcp`` process."""
    if choice != "auto":
        return choice == "http"
    from neural_memory.local.agents.memory_client import serves_mcp

    return serves_mcp(url, key or os.environ.get("NM_API_KEY"), timeout=10)


def cmd_agents_uninstall(args: argparse.Namespace) -> int:
    """Remove exactly what ``agents install`` wrote into ``--project``."""
    from neural_memory.local.agents.claude_code import uninstall

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
    from neural_memory.local.agents.claude_code import status

    healthy, lines = status(Path(args.project).resolve(), os.environ.get("NM_API_KEY"))
    print("\n".join(lines))
    return 0 if healthy else 1


def register(commands: Commands) -> None:
    """``agents install|uninstall|status claude-code``."""
    agents = commands.add_parser(
        "agents", help="coding agents that remember: Claude Code's MCP server and hooks in a project"
    ).add_subparsers(dest="agents_command", required=True)
    for name, helped, run in (
        (
            "install",
            "write the MCP server, the hooks and the key into the project (merged, idempotent)",
            cmd_agents_install,
        ),
        ("uninstall", "remove exactly what install wrote", cmd_agents_uninstall),
        ("status", "what is installed and whether the memory answers (exit 1 if not)", cmd_agents_status),
    ):
        command = agents.add_parser(name, help=helped)
        command.add_argument("agent", choices=["claude-code"], help="the agent (claude-code)")
        command.add_argument("--project", default=".", help="the project folder (default: here)")
        if name == "install":
            command.add_argument(
                "--url", help="a running API (default: the one the committed files name, else the repository's memory)"
            )
            command.add_argument(
                "--import-history",
                action=argparse.BooleanOptionalAction,
                help="bring the repository's git history into the memory now (default: asked on a terminal)",
            )
            command.add_argument(
                "--key",
                help="its API key, written to .claude/settings.local.json only (default: NM_API_KEY at run time)",
            )
            command.add_argument(
                "--data-dir", help="an embedded store's folder (default: the repository's, .neural-memory at its root)"
            )
            command.add_argument("--workspace", help="with --data-dir: the workspace (default: the repository's)")
            command.add_argument(
                "--budget-tokens", type=int, help="what a session's brief or a prompt's recall may add (default 1500)"
            )
            command.add_argument(
                "--mcp",
                choices=["auto", "http", "process"],
                default="auto",
                help="with --url: Claude Code's MCP server is the API's own /mcp over HTTP (http) or a local "
                "`neural-memory mcp` process (process); auto (default): http when the API serves /mcp",
            )
        command.set_defaults(func=run)
