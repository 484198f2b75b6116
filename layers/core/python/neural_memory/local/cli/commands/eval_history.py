"""``neural-memory eval-history``: retrieval on a real repository's history (``local/evaluation/history.py``)."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import cli_settings
from neural_memory.local.cli.flags import data_dir

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands


def cmd_eval_history(args: argparse.Namespace) -> int:
    """Import a clone's history into a temporary store and score changelog → PR retrieval and what
    old history is still found; the last line is one JSON object."""
    from neural_memory.local.evaluation import history as history_eval
    from neural_memory.local.history.git import GitHistoryError
    from neural_memory.observability import logger

    previous = logger.log_level
    if not (os.getenv("POWERTOOLS_LOG_LEVEL") or os.getenv("LOG_LEVEL")):
        logger.setLevel(logging.WARNING)  # a "search complete" line per search would bury the report
    try:
        result = history_eval.run(Path(args.path), args.repo, args.pr_tier, cli_settings(args), args.changelog)
    except GitHistoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        logger.setLevel(previous)
    if not args.json:
        print("\n".join(history_eval.summary(result)))
    print(json.dumps(result))
    return 0


def register(commands: Commands) -> None:
    """``eval-history PATH``."""
    eval_history = commands.add_parser(
        "eval-history",
        help="a clone's history imported into a temporary store: changelog entries -> the PRs they cite "
        "(recall@10, MRR@10 per mode), and whether two-year-old PRs and pushes are still found",
    )
    eval_history.add_argument("path", help="a clone (work tree or bare) of a repository with a changelog")
    eval_history.add_argument("--repo", help="owner/name, when the clone's origin does not say")
    eval_history.add_argument("--pr-tier", choices=["A", "C", "E"], help="the tier of merged PRs for this run")
    eval_history.add_argument(
        "--changelog", metavar="PATH", help="the changelog in the tree (default: CHANGES.rst, HISTORY.md, … found)"
    )
    eval_history.add_argument("--json", action="store_true", help="print only the JSON line")
    data_dir(eval_history)
    eval_history.set_defaults(func=cmd_eval_history)
