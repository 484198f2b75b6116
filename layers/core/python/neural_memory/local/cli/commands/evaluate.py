"""``neural-memory eval``: retrieval quality on a document (BEIR), conversation (LoCoMo) or
engineering-events set."""

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


def cmd_eval(args: argparse.Namespace) -> int:
    """Score retrieval on a BEIR-layout, a LoCoMo-layout or an engineering-events dataset; the last
    line is one JSON object."""
    from neural_memory.observability import logger

    if args.rerank == "local" and (missing := _local_reranker_missing(args)):
        print(f"error: --rerank local: {missing}", file=sys.stderr)  # not a run of fast under another name
        return 2
    previous = logger.log_level
    if not (os.getenv("POWERTOOLS_LOG_LEVEL") or os.getenv("LOG_LEVEL")):
        logger.setLevel(logging.WARNING)  # a "search complete" line per search would bury the report
    try:
        return _evaluate(args)
    finally:
        logger.setLevel(previous)  # the CLI may run inside another program (its tests do)


def _local_reranker_missing(args: argparse.Namespace) -> str | None:
    """Why the local cross-encoder cannot serve ``--rerank local`` (not pulled, unknown), or None."""
    from neural_memory.errors import ConfigurationError
    from neural_memory.providers.hub_models import hub_model, pulled_folder

    settings = cli_settings(args)
    try:
        pulled_folder(settings.data_dir, hub_model(settings.local_reranker, role="rerank"))
    except ConfigurationError as exc:
        return str(exc)
    return None


def _evaluate(args: argparse.Namespace) -> int:
    from neural_memory.local.evaluation import conversations, engineering_events

    folder = Path(args.dataset)
    if engineering_events.is_engineering_dataset(folder):  # first: its queries.json is also a *.json
        result = engineering_events.run(folder, args.mode, args.rerank, cli_settings(args))
        if not args.json:
            print("\n".join(engineering_events.summary(result)))
        print(json.dumps(result))
        return 0
    if conversations.is_conversation_dataset(folder):
        result = conversations.run(folder, args.mode, args.rerank, cli_settings(args))
        if not args.json:
            print(
                f"{result['mode']} ({result['dataset']}, {result['questions']} questions in "
                f"{result['conversations']} conversations): evidence recall@10 {result['recall@10']:.4f}, "
                f"hit@10 {result['hit@10']:.4f}"
            )
            for name, scores in result["by_category"].items():
                print(f"  {name:<12} {scores['questions']:>4} questions: recall@10 {scores['recall@10']:.4f}, "
                      f"hit@10 {scores['hit@10']:.4f}")  # fmt: skip
        print(json.dumps(result))
        return 0
    from neural_memory.local.evaluation.beir import run

    result = run(folder, args.mode, args.rerank, args.split, cli_settings(args))
    if not args.json:
        print(
            f"{result['mode']} ({result['split']}, {result['queries']} queries): "
            f"nDCG@10 {result['ndcg@10']:.4f}, recall@100 {result['recall@100']:.4f}"
        )
    print(json.dumps(result))
    return 0


def register(commands: Commands) -> None:
    """``eval DATASET``."""
    evaluate = commands.add_parser(
        "eval",
        help="nDCG@10 and recall@100 on a BEIR dataset; evidence recall@10 and hit@10 on LoCoMo; top-3 accuracy, "
        "recall, E precision and latency per tier against the design's targets on engineering events",
    )
    evaluate.add_argument(
        "dataset",
        help="folder with corpus.jsonl[.gz], queries.jsonl, qrels/<split>.tsv (BEIR), a LoCoMo *.json[.gz], or "
        "events.jsonl + queries.json (engineering events, e.g. bench/engineering_events)",
    )
    evaluate.add_argument(
        "--mode", default="hybrid", choices=["hybrid", "semantic", "keyword"], help="retrieval (default hybrid)"
    )
    evaluate.add_argument(
        "--rerank",
        default="fast",
        choices=["fast", "balanced", "thorough", "local"],
        help="rerank mode (default fast; local: the cross-encoder `models pull` fetched)",
    )
    evaluate.add_argument("--split", default="test", help="qrels file to score (tune on train, report test)")
    evaluate.add_argument("--json", action="store_true", help="print only the JSON line")
    data_dir(evaluate)
    evaluate.set_defaults(func=cmd_eval)
