"""``neural-memory ingest`` and ``replay``: files and saved events into a workspace, in batches."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neural_memory.local.cli.common import cli_settings, progress_bar
from neural_memory.local.cli.flags import data_dir

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands

INGEST_BATCH = 64


def cmd_ingest(args: argparse.Namespace) -> int:
    """Load observations from event or request files into a workspace; failures go to a report."""
    from neural_memory.local.ingest.files import expand, load_file

    files = expand(Path(p) for p in args.paths)
    loaded = []
    with progress_bar(len(files), "file", "reading") as bar:
        for path in files:
            loaded.extend(load_file(path))
            bar.update(1)
    return _index(args, loaded)


def cmd_replay(args: argparse.Namespace) -> int:
    """Ingest again the documents of a failure report; what still fails is written back to it."""
    from neural_memory.local.ingest.runner import read_failures

    args.failures = args.failures or args.report
    return _index(args, read_failures(Path(args.report)))


def _index(args: argparse.Namespace, loaded: list[Any]) -> int:
    from neural_memory.local.ingest.runner import ingest_loaded, write_failures
    from neural_memory.runtime import build_service

    service = build_service(cli_settings(args))
    total = sum(len(item.observations) for item in loaded)
    with progress_bar(total, "obs", "indexing") as bar:
        report = ingest_loaded(service, args.workspace, loaded, INGEST_BATCH, progress=bar.update)
    for origin, reason in report.skipped:
        print(f"skipped {origin}: {reason}", file=sys.stderr)
    for failure in report.failures:
        print(f"FAILED  {failure.origin}: {failure.reason}", file=sys.stderr)
    failures_path = Path(args.failures)
    if report.failures:
        write_failures(failures_path, report.failures)
        print(f"failure report: {failures_path} (retry with: neural-memory replay {failures_path})", file=sys.stderr)
    elif failures_path.exists() and getattr(args, "report", None):
        failures_path.unlink()  # everything replayed
    held = service.store.count(args.workspace)
    print(
        f"{report.created} created, {report.updated} updated, {len(report.skipped)} skipped, "
        f"{len(report.failures)} failed, {report.redacted} with a secret redacted; "
        f"workspace {args.workspace!r} holds {held} observations"
    )
    return 1 if report.failures else 0


def register_ingest(commands: Commands) -> None:
    """``ingest PATHS``."""
    ingest = commands.add_parser("ingest", help="load event or request JSON files (or folders, .jsonl)")
    ingest.add_argument("paths", nargs="+", help="files or folders: EventBridge events, API requests, JSON or JSONL")
    ingest.add_argument("--workspace", default="demo", help="the workspace to load them into (default demo)")
    ingest.add_argument("--failures", default="ingest-failures.jsonl", help="where to write the failure report")
    data_dir(ingest)
    ingest.set_defaults(func=cmd_ingest)


def register_replay(commands: Commands) -> None:
    """``replay REPORT``."""
    replay = commands.add_parser("replay", help="ingest again what a failure report lists")
    replay.add_argument("report", help="a failure report written by ingest or replay")
    replay.add_argument("--workspace", default="demo", help="the workspace to load them into (default demo)")
    replay.add_argument("--failures", help="where to write what still fails (default: the report itself)")
    data_dir(replay)
    replay.set_defaults(func=cmd_replay)
