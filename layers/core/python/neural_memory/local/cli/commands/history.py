"""``neural-memory import git|github|vercel``: a team's history into a workspace, with progress
and a summary (created, updated, skipped with reasons, failed into a replayable report).

Each writes to the embedded store of ``--data-dir`` (``--workspace``) or, with ``--api-url`` and
a key, to a running API (a deployed stack: the key names the workspace)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neural_memory.local.cli.common import cli_settings, progress_bar

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable

    from neural_memory.history.sink import Sink
    from neural_memory.ingest.runner import IngestReport


def cmd_import_git(args: argparse.Namespace) -> int:
    """First-parent history of a local clone's default branch: pushes and merged pull requests."""
    from neural_memory.history.git import GitHistory, GitHistoryError

    try:
        history = GitHistory(Path(args.path), repo=args.repo, branch=args.branch, since=args.since)
        total = history.count()
    except GitHistoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"importing {history.repo} ({history.branch}): {total} commits", file=sys.stderr)
    return _run(args, history.events(), total, "commit")


def _sink(args: argparse.Namespace) -> Sink:
    from neural_memory.history.sink import ApiSink, EmbeddedSink

    if args.api_url:
        from neural_memory.client import NeuralMemoryClient

        return ApiSink(NeuralMemoryClient(args.api_url, args.key))
    from neural_memory.service import build_service

    return EmbeddedSink(build_service(cli_settings(args)), args.workspace)


def _run(
    args: argparse.Namespace, documents: Iterable[tuple[str, dict[str, Any]]], total: int | None, unit: str
) -> int:
    from neural_memory.history.sink import run_import
    from neural_memory.ingest.runner import write_failures

    sink = _sink(args)
    with progress_bar(total or 0, unit, "importing") as bar:
        if not total:
            bar.total = None
        report = run_import(documents, sink, progress=bar.update)
    _summary(report)
    if report.failures:
        path = Path(args.failures)
        write_failures(path, report.failures)
        print(f"failure report: {path} (retry with: neural-memory replay {path})", file=sys.stderr)
        return 1
    return 0


def _summary(report: IngestReport) -> None:
    reasons = Counter(_reason_kind(reason) for _, reason in report.skipped)
    print(
        f"{report.created} created, {report.updated} updated, {len(report.skipped)} skipped, "
        f"{len(report.failures)} failed"
    )
    for reason, count in reasons.most_common():
        print(f"  skipped {count}: {reason}")


def _reason_kind(reason: str) -> str:
    """A skip reason without what names one event (a branch, a number), to count them by kind."""
    return reason.split(" of ", 1)[0].split(" by ", 1)[0]
