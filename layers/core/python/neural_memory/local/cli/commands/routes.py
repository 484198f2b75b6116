"""``neural-memory routes``: the webhook routing table (repository or project -> workspace)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse


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
