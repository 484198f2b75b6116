"""``neural-memory eval-questions``: questions as people ask them, on a real history
(``local/evaluation/questions.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import cli_settings
from neural_memory.local.cli.flags import data_dir

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands


def cmd_eval_questions(args: argparse.Namespace) -> int:
    """Import the clone's history into ``--history-dir`` (once) and score the question set on it; the
    last line is one JSON object."""
    from neural_memory.local.evaluation import questions as question_eval
    from neural_memory.local.history.git import GitHistoryError

    try:
        with question_eval.quiet():
            result = question_eval.run(
                Path(args.questions), Path(args.clone), Path(args.history_dir), cli_settings(args)
            )
    except (GitHistoryError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.json:
        print("\n".join(question_eval.summary(result)))
    print(json.dumps(result))
    return 0


def register(commands: Commands) -> None:
    """``eval-questions QUESTIONS CLONE``."""
    eval_questions = commands.add_parser(
        "eval-questions",
        help="questions as people ask them (bench/questions/*.json) on a clone's history, in default search",
    )
    eval_questions.add_argument("questions", help="a question set: bench/questions/<repo>.json")
    eval_questions.add_argument("clone", help="a clone of the repository the set names")
    eval_questions.add_argument(
        "--history-dir",
        required=True,
        help="a folder the history is imported into once and reused from (one per repository)",
    )
    eval_questions.add_argument("--json", action="store_true", help="print only the JSON line")
    data_dir(eval_questions)
    eval_questions.set_defaults(func=cmd_eval_questions)
