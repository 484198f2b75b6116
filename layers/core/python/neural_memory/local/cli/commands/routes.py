"""``neural-memory routes``: the webhook routing table (repository or project -> workspace)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands


def cmd_routes(args: argparse.Namespace) -> int:
    """List, add or remove webhook routes (``github:<owner/repo>`` / ``vercel:<team id>`` → workspace)."""
    from neural_memory.ingest.routing import check_route, load_routes, save_routes

    path = Path(args.file)
    try:
        routes = load_routes(path)
        if args.routes_command == "add":
            check_route(args.key, args.workspace)
            routes[args.key] = args.workspace
        elif args.routes_command == "remove" and routes.pop(args.key, None) is None:
            print(f"error: {args.key} is not routed in {path}", file=sys.stderr)
            return 1
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.routes_command != "list":
        save_routes(path, routes)
        print(f"{path}: {len(routes)} routes. `make serve` reads them at start; `make deploy` applies them on AWS.")
    for key, workspace in sorted(routes.items()):
        print(f"{key}\t{workspace}")
    return 0


def register(commands: Commands) -> None:
    """``routes list|add|remove``, each with ``--file``."""
    from neural_memory.ingest.routing import ROUTES_FILE

    routes = commands.add_parser("routes", help="which workspace each repository or Vercel team feeds")
    routes_commands = routes.add_subparsers(dest="routes_command", required=True)
    for name, helped in (
        ("list", "print the routing table"),
        ("add", "route github:<owner/repo> or vercel:<team id> to a workspace"),
        ("remove", "remove a route"),
    ):
        command = routes_commands.add_parser(name, help=helped)
        if name != "list":
            command.add_argument("key", help="github:<owner/repo>, vercel:<team id> or neural-memory:<workspace>")
        if name == "add":
            command.add_argument("workspace", help="the workspace its events go to")
        command.add_argument("--file", default=str(ROUTES_FILE), help=f"the routing table (default ./{ROUTES_FILE})")
        command.set_defaults(func=cmd_routes)
