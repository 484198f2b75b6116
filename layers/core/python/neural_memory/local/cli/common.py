"""What the commands share: the settings from flags and environment, progress bars and Ctrl-C."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from neural_memory.settings import Settings


def cli_settings(args: argparse.Namespace) -> Settings:
    """Settings from the environment, with command-line flags taking precedence."""
    from neural_memory.settings import Settings

    overrides: dict[str, Any] = {}
    if getattr(args, "data_dir", None):
        overrides["data_dir"] = Path(args.data_dir)
    if getattr(args, "embedder", None):
        overrides["embedder"] = args.embedder
    if getattr(args, "store", None):
        overrides["store"] = args.store
    if getattr(args, "opensearch_url", None):
        overrides["opensearch_url"] = args.opensearch_url
    if getattr(args, "concurrency", None) is not None:
        overrides["serve_concurrency"] = args.concurrency
    if args.command == "serve":
        overrides.setdefault("documents_yield_to_queries", True)  # an ingest never holds up a search
        from neural_memory.ingest.routing import load_routes

        if routes := load_routes(Path(args.routes)):  # webhooks and bus events name their workspace by these
            overrides["ingest_routes"] = {**Settings().ingest_routes, **routes}
    return Settings(**overrides)


def progress_bar(total: int, unit: str, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, disable=None)


def interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
