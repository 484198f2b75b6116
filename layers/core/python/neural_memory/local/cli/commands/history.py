"""``neural-memory import git|github|vercel``: a team's history into a workspace, with progress
and a summary (created, updated, skipped with reasons, failed into a replayable report).

Each writes to the embedded store of ``--data-dir`` (``--workspace``) or, with ``--api-url`` and
a key, to a running API (a deployed stack: the key names the workspace)."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections import Counter
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neural_memory.local.cli.common import cli_settings, folder_of, yielding_to_servers
from neural_memory.local.cli.flags import data_dir, since, verbose

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable

    from neural_memory.local.agents.repository_memory import RepositoryMemory
    from neural_memory.local.cli.flags import Commands
    from neural_memory.local.history.cursor import Checkpoint, Cursor
    from neural_memory.local.history.sink import Sink
    from neural_memory.local.ingest.runner import IngestReport


def cmd_import_git(args: argparse.Namespace) -> int:
    """First-parent history of a local clone's default branch: pushes and merged pull requests,
    streamed as they are written; an interrupted import continues after the last commit it wrote
    (its cursor is dropped once an import completes: a re-run reads everything again)."""
    from neural_memory.local.history.git import GitHistory, GitHistoryError
    from neural_memory.local.history.progress import duration

    memory = _repository_memory(args)
    try:
        history = GitHistory(Path(args.path), repo=args.repo, branch=args.branch, since=args.since)
        for note in history.notes:
            print(f"note: {note}", file=sys.stderr)
        commits = history.count()
        from neural_memory.redaction.identifiers import redact_identifier
        from neural_memory.redaction.observations import redact_text

        # A branch's name is a source's text: a secret in it is out of the cursor file's name and
        # the progress line, as out of what is stored.
        cursor = _cursor(args, f"git-{history.repo.replace('/', '.')}-{redact_identifier(history.branch)[0]}")
        branch = redact_text(history.branch)[0]
        print(f"importing {history.repo} ({branch}): {commits:,} commits{_resuming(cursor)}", file=sys.stderr)
        print("reading the history (the main line, every commit's author, the diffs) ...", file=sys.stderr, flush=True)
        began = time.monotonic()
        total = history.prepare()
        stream = history.stream(after=cursor.state.get("commit"))
        first = next(stream, None)  # where a resumed import starts is known once the stream begins
    except GitHistoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"read in {duration(time.monotonic() - began)}: {total:,} events ({len(history.graph()):,} commits in all)"
        + (f"; {history.skipped:,} written by the interrupted run, passed over" if history.skipped else ""),
        file=sys.stderr,
    )
    for warning in history.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    joined = history.who.joined()
    if joined:
        shown = "; ".join(f"{' = '.join(names)} ({why})" for names, why in joined[:5])
        more = f"; and {len(joined) - 5} more" if len(joined) > 5 else ""
        print(f"one person, one actor: {len(joined)} joined: {shown}{more}", file=sys.stderr)
    documents = chain([first] if first is not None else [], stream)
    code = _run(args, documents, total, "event", cursor, done=history.skipped)
    if code == 0:
        cursor.clear()
        if memory is not None:
            from neural_memory.clock import utcnow

            memory.mark(imported_at=utcnow().isoformat())
            print(f"the repository's memory: {memory.data_dir}, workspace {memory.workspace}", file=sys.stderr)
    return code


def _repository_memory(args: argparse.Namespace) -> RepositoryMemory | None:
    """Without ``--workspace`` or ``--api-url``: the memory of the repository imported (``import
    git PATH``'s, or the one the command runs in; its ``.neural-memory`` unless ``--data-dir``/
    ``NM_DATA_DIR`` says another folder; its workspace), which ``agents install`` and the CLI find too."""
    from neural_memory.local.agents.repository_memory import repository_memory

    if args.workspace or args.api_url:
        return None
    memory = repository_memory(Path(getattr(args, "path", ".")).resolve(), args.data_dir)
    if memory is None:
        return None
    memory.mark()
    args.workspace, args.data_dir = memory.workspace, str(memory.data_dir)
    return memory


def cmd_import_github(args: argparse.Namespace) -> int:
    """A repository's closed pull requests, issues with their comments, and releases, from GitHub's API."""
    from neural_memory.local.history.github import GitHubImport, github_source
    from neural_memory.local.history.rest import SourceError

    _repository_memory(args)
    token = os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
    if not token:
        print("warning: no GITHUB_TOKEN (or GH_TOKEN): 60 requests an hour, public repositories only", file=sys.stderr)
    api = github_source(token, args.api_base)
    try:
        importer = GitHubImport(api, args.repo, {}, since=args.since)
        repo = importer.resolve()
        cursor = _cursor(args, f"github-{repo.replace('/', '.')}")
        importer.state = cursor.state
        print(f"importing {repo} from {args.api_base}{_resuming(cursor)}", file=sys.stderr)
        return _run(args, importer.events(), None, "event", cursor)
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        api.close()


def cmd_import_vercel(args: argparse.Namespace) -> int:
    """A project's deployments with their state and commit, from Vercel's API."""
    from neural_memory.local.history.vercel import VercelImport, vercel_source

    _repository_memory(args)
    token = os.environ.get("VERCEL_TOKEN")
    if not token:
        print("error: set VERCEL_TOKEN (a token from vercel.com/account/tokens)", file=sys.stderr)
        return 2
    api = vercel_source(token, args.api_base)
    try:
        cursor = _cursor(args, f"vercel-{args.team + '.' if args.team else ''}{args.project}")
        importer = VercelImport(api, args.project, cursor.state, team=args.team, since=args.since)
        print(f"importing {args.project}'s deployments from {args.api_base}{_resuming(cursor)}", file=sys.stderr)
        code = _run(args, importer.events(), None, "deployment", cursor)
        if importer.skipped:
            print(f"  passed over {importer.skipped} deployment(s) in a state no webhook reports (e.g. deleted)")
        return code
    finally:
        api.close()


def _cursor(args: argparse.Namespace, name: str) -> Cursor:
    """The import's cursor in the data folder, for the target it writes to."""
    from neural_memory.local.history.cursor import Cursor

    target = f"api {args.api_url}" if args.api_url else f"workspace {args.workspace}"
    return Cursor(folder_of(args), name, target, restart=args.restart)


def _resuming(cursor: Cursor) -> str:
    return f" (continuing from {cursor.path}; --restart reads everything again)" if cursor.state else ""


def _sink(args: argparse.Namespace) -> Sink:
    from neural_memory.local.history.sink import ApiSink, EmbeddedSink

    if args.api_url:
        from neural_memory.local.client import NeuralMemoryClient

        return ApiSink(NeuralMemoryClient(args.api_url, args.key))
    from neural_memory.runtime import build_service

    if not args.workspace:
        raise SystemExit("error: give --workspace (the embedded store's workspace) or --api-url and --key")
    # Bulk work beside a server on the same folder (issue 58): embedded on low-priority document
    # threads, in slices, as serve embeds a batch (the rest of the import: ``yielding_to_servers``).
    settings = cli_settings(args).model_copy(update={"documents_yield_to_queries": True})
    return EmbeddedSink(build_service(settings), args.workspace)


def _run(
    args: argparse.Namespace,
    documents: Iterable[tuple[str, dict[str, Any]] | Checkpoint],
    total: int | None,
    unit: str,
    cursor: Cursor | None = None,
    done: int = 0,
) -> int:
    """Import ``documents`` (with ``cursor``: saving its checkpoints as their documents are
    written; ``done``: what an interrupted run wrote already) with progress a terminal or a log
    reads; an API that cannot be read stops the import with what was written summed up."""
    from neural_memory.local.history.cursor import Checkpoint, Checkpointed
    from neural_memory.local.history.progress import ImportProgress
    from neural_memory.local.history.rest import SourceError
    from neural_memory.local.history.sink import run_import
    from neural_memory.local.ingest.runner import write_failures

    sink = _sink(args)
    if cursor is not None:
        stream = Checkpointed(documents, cursor)
        sink, plain = stream.sink(sink), stream.documents()
    else:
        plain = (d for d in documents if not isinstance(d, Checkpoint))
    stopped = None
    # An import into the embedded store takes the CPU after a server's requests (issue 58).
    yielding = yielding_to_servers() if not args.api_url else contextlib.nullcontext()
    with yielding, ImportProgress(total or None, unit, done=done) as progress:
        try:
            report = run_import(plain, sink, progress=progress.update)
        except SourceError as exc:
            report, stopped = sink.report, exc
    _summary(report)
    if stopped is not None:
        where = f" continues from {cursor.path}" if cursor is not None else " starts again"
        print(f"error: {stopped}\nstopped; what was written is kept, and a re-run{where}", file=sys.stderr)
    if report.failures:
        path = Path(args.failures)
        write_failures(path, report.failures)
        print(f"failure report: {path} (retry with: neural-memory replay {path})", file=sys.stderr)
        return 1
    return 1 if stopped is not None else 0


def _summary(report: IngestReport) -> None:
    reasons = Counter(_reason_kind(reason) for _, reason in report.skipped)
    print(
        f"{report.created} created, {report.updated} updated, {len(report.skipped)} skipped, "
        f"{len(report.failures)} failed, {report.redacted} with a secret redacted"
    )
    for reason, count in reasons.most_common():
        print(f"  skipped {count}: {reason}")


def _reason_kind(reason: str) -> str:
    """A skip reason without what names one event (a branch, a number), to count them by kind."""
    return reason.split(" of ", 1)[0].split(" by ", 1)[0]


def _import_target(p: argparse.ArgumentParser) -> None:
    """Where an importer writes: the embedded store's workspace, or a running API with its key."""
    p.add_argument("--workspace", help="the embedded store's workspace (default: the repository's, owner.name)")
    p.add_argument("--api-url", help="write to a running API (a stack's ApiUrl); its key names the workspace")
    p.add_argument("--key", help="with --api-url: its API key (default NM_API_KEY)")
    p.add_argument("--failures", default="import-failures.jsonl", help="where to write the failure report")
    data_dir(p)
    verbose(p)


def _api_source(p: argparse.ArgumentParser, api_base: str, api_help: str, since_help: str) -> None:
    """What an importer reading a REST API takes: its address, ``--since``, ``--restart``."""
    p.add_argument("--api-base", default=api_base, help=api_help)
    p.add_argument("--since", type=since, help=since_help)
    p.add_argument(
        "--restart", action="store_true", help="ignore the cursor of an earlier run and read everything again"
    )
    _import_target(p)


def register(commands: Commands) -> None:
    """``import git|github|vercel``."""
    imports = commands.add_parser(
        "import", help="bring a team's history in: a git clone, GitHub's API, Vercel's deployments"
    ).add_subparsers(dest="import_command", required=True)

    import_git = imports.add_parser(
        "git", help="a local clone, offline: first-parent history of the default branch as pushes and merged PRs"
    )
    import_git.add_argument("path", help="the clone (a work tree or a bare repository)")
    import_git.add_argument(
        "--repo",
        help="owner/name as GitHub names it (default: a remote's, else the one the project's files link to, "
        "else local/<folder>)",
    )
    import_git.add_argument("--branch", help="the branch to read (default: the clone's default branch)")
    import_git.add_argument("--since", type=since, help="only commits on or after this ISO-8601 date")
    import_git.add_argument(
        "--restart", action="store_true", help="read from the first commit, not after an interrupted run's last"
    )
    _import_target(import_git)
    import_git.set_defaults(func=cmd_import_git)

    import_github = imports.add_parser(
        "github",
        help="GitHub's API (token in GITHUB_TOKEN or GH_TOKEN): closed PRs with files, reviewers and merger; "
        "issues with comments; releases",
    )
    import_github.add_argument("repo", help="owner/name")
    _api_source(
        import_github,
        os.environ.get("GITHUB_API_URL", "https://api.github.com"),
        "the API's address (GitHub Enterprise: https://HOST/api/v3; default GITHUB_API_URL or api.github.com)",
        "only what was updated on or after this ISO-8601 date",
    )
    import_github.set_defaults(func=cmd_import_github)

    import_vercel = imports.add_parser(
        "vercel", help="Vercel's API (token in VERCEL_TOKEN): a project's deployments with their state and commit"
    )
    import_vercel.add_argument("project", help="the project's id or name")
    import_vercel.add_argument("--team", help="the team's id (teamId), for a team's project")
    _api_source(
        import_vercel,
        os.environ.get("VERCEL_API_URL", "https://api.vercel.com"),
        "the API's address (default VERCEL_API_URL or api.vercel.com)",
        "only deployments created on or after this ISO-8601 date",
    )
    import_vercel.set_defaults(func=cmd_import_vercel)
