"""``neural-memory scrub``: secrets out of what was stored before redaction (``use_cases/scrubbing.py``),
on the embedded store or, with ``NM_STORE=opensearch``, the deployed index; with progress,
resumable from where a stopped run left off (its cursor is kept in the data folder)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import cli_settings, progress_bar
from neural_memory.local.cli.flags import data_dir

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from neural_memory.local.cli.flags import Commands
    from neural_memory.use_cases.scrubbing import ScrubCursor, ScrubReport

CURSOR_FILE = "scrub-cursor.json"


def _load(path: Path) -> ScrubCursor | None:
    from neural_memory.use_cases.scrubbing import ScrubCursor

    return ScrubCursor.from_json(json.loads(path.read_text())) if path.exists() else None


def _save(path: Path, cursor: ScrubCursor) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(cursor.to_json()))
    temporary.replace(path)


def cmd_scrub(args: argparse.Namespace) -> int:
    """Redact every stored record (all workspaces, or ``--workspace``), write the changed ones again,
    then, on the embedded store, wipe what the old text left in the files (``compaction``)."""
    from neural_memory.auth.roles import OPERATOR
    from neural_memory.runtime import build_service
    from neural_memory.stores.sqlite.files import FolderInUse, exclusively
    from neural_memory.use_cases.auditing import ScrubTally

    settings = cli_settings(args)
    embedded = settings.store == "sqlite"
    if embedded:
        if not settings.sqlite_path.exists():
            print(f"nothing to scrub: no store in {settings.data_dir}")
            return 0
        try:  # it rewrites and compacts the files: nothing else may use them meanwhile
            with exclusively(settings.sqlite_path):
                pass
        except FolderInUse as exc:
            print(f"error: {exc} (scrub rewrites the store's files)", file=sys.stderr)
            return 1
    settings.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    cursor_path = settings.data_dir / CURSOR_FILE
    cursor = _load(cursor_path)
    if cursor is not None:
        print(f"resuming the scrub stopped in {cursor.workspace or 'between workspaces'}", file=sys.stderr)
    service = build_service(settings)
    tally = ScrubTally(service.audit, OPERATOR)  # each workspace's count, for its audit trail
    counts = service.scrub_workspaces()
    total = counts.get(args.workspace, 0) if args.workspace else sum(counts.values())
    bar = progress_bar(total, "obs", "scrub")

    def progress(report: ScrubReport) -> None:
        tally.progress(report)
        _save(cursor_path, report.cursor)
        bar.update(report.scanned - bar.n)
        bar.set_postfix(redacted=report.redacted)

    try:
        report = service.scrub(cursor, progress=progress, only=args.workspace)
    except KeyboardInterrupt:
        bar.close()
        tally.record(list(tally.redacted))
        service.close()
        print(f"stopped; run `neural-memory scrub` again to resume (cursor: {cursor_path})", file=sys.stderr)
        return 130
    bar.close()
    tally.record(list(tally.redacted))
    cursor_path.unlink(missing_ok=True)
    service.close()
    print(f"scanned {report.scanned} observations; {report.redacted} had a secret redacted and were written again")
    if report.raced:
        print(f"{report.raced} changed while being scrubbed (each such write was redacted itself)")
    if embedded:
        from neural_memory.stores.sqlite.compaction import compact

        try:
            compact(settings.sqlite_path)
        except FolderInUse as exc:
            print(f"error: the files were not compacted: {exc}; run scrub again when it is free", file=sys.stderr)
            return 1
        print("compacted: the full-text index merged, the file rebuilt, the WAL emptied, the saved index dropped")
    return 0


def register(commands: Commands) -> None:
    """``scrub``: ``--workspace`` and the store's flags."""
    scrub = commands.add_parser(
        "scrub",
        help="redact secrets in what was stored before redaction (re-embedding what changed, resumable); "
        "embedded store: then compact its files (run while no serve or mcp uses the folder)",
    )
    scrub.add_argument("--workspace", help="only this workspace (default: every one)")
    data_dir(scrub)
    scrub.set_defaults(func=cmd_scrub)
