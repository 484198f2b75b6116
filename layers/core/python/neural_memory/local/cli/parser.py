"""The command line: every command, its flags and the function that runs it."""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime

from neural_memory.audit.actions import ACTIONS as AUDIT_ACTIONS
from neural_memory.auth.roles import ROLES
from neural_memory.local.cli.commands.agents import cmd_agents_install, cmd_agents_status, cmd_agents_uninstall
from neural_memory.local.cli.commands.answers import cmd_ask, cmd_who
from neural_memory.local.cli.commands.audit import cmd_audit
from neural_memory.local.cli.commands.backup import cmd_backup
from neural_memory.local.cli.commands.check import cmd_check
from neural_memory.local.cli.commands.dlq import cmd_dlq_replay
from neural_memory.local.cli.commands.eval_history import cmd_eval_history
from neural_memory.local.cli.commands.eval_questions import cmd_eval_questions
from neural_memory.local.cli.commands.evaluate import cmd_eval
from neural_memory.local.cli.commands.history import cmd_import_git, cmd_import_github, cmd_import_vercel
from neural_memory.local.cli.commands.ingest import cmd_ingest, cmd_replay
from neural_memory.local.cli.commands.keys import cmd_keys_create, cmd_keys_list, cmd_keys_revoke
from neural_memory.local.cli.commands.mcp import cmd_mcp
from neural_memory.local.cli.commands.models import cmd_models_list, cmd_models_pull
from neural_memory.local.cli.commands.openapi import cmd_openapi
from neural_memory.local.cli.commands.purge import cmd_purge
from neural_memory.local.cli.commands.reindex import cmd_migrate_index, cmd_reindex
from neural_memory.local.cli.commands.restore import cmd_restore
from neural_memory.local.cli.commands.routes import cmd_routes
from neural_memory.local.cli.commands.scrub import cmd_scrub
from neural_memory.local.cli.commands.search import cmd_search
from neural_memory.local.cli.commands.serve import cmd_serve

DESCRIPTION = "Run the local API, manage keys, ingest files and search from the terminal."


def _since(value: str) -> str:
    """Validate ``--since`` early: an ISO-8601 date or datetime (UTC if no zone)."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO-8601 date: {value!r}") from exc
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    from neural_memory import __version__
    from neural_memory.ingest.routing import ROUTES_FILE

    parser = argparse.ArgumentParser(prog="neural-memory", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"neural-memory {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def data_dir(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data-dir", help="embedded store folder (env NM_DATA_DIR, default .neural-memory)")
        p.add_argument("--embedder", choices=["onnx", "cohere", "none"], help="embedding provider (env NM_EMBEDDER)")
        p.add_argument("--store", choices=["sqlite", "opensearch"], help="store (env NM_STORE, default sqlite)")
        p.add_argument("--opensearch-url", help="OpenSearch endpoint when --store opensearch (env NM_OPENSEARCH_URL)")

    def verbose(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--verbose", action="store_true", help="log lines on standard error (default: ~/.local/state/neural-memory)"
        )

    def remote(p: argparse.ArgumentParser) -> None:
        # The flags choose the remote API; the variables only fill in the one not given, so a
        # shell that exports them for the MCP server still searches the local store by default.
        p.add_argument(
            "--url", help="a remote API (a stack's ApiUrl or http://127.0.0.1:8080); NM_API_URL if only --key is given"
        )
        p.add_argument("--key", help="its API key, which names the workspace; NM_API_KEY when only --url is given")

    serve = commands.add_parser("serve", help="run the local API")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default loopback only)")
    serve.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    serve.add_argument(
        "--samples", default="events", help="sample events loaded into the 'demo' workspace at the first start"
    )
    serve.add_argument("--no-samples", action="store_true", help="do not load sample events")
    serve.add_argument(
        "--no-demo", action="store_true", help="no demo workspace at all: no key, no samples (agents' hooks use it)"
    )
    serve.add_argument(
        "--reload-samples",
        action="store_true",
        help="load the samples into 'demo' again (deleted ones come back, times rebased to now): make demo-reset",
    )
    serve.add_argument("--quiet", action="store_true", help="no access log")
    serve.add_argument("--routes", default=str(ROUTES_FILE), help="webhook routing table, if present")
    serve.add_argument(
        "--concurrency",
        type=int,
        help="requests handled at once; each function runs up to this many handler instances "
        "(default 8, or NM_SERVE_CONCURRENCY)",
    )
    data_dir(serve)
    serve.set_defaults(func=cmd_serve)

    keys = commands.add_parser("keys", help="manage API keys").add_subparsers(dest="keys_command", required=True)
    create = keys.add_parser("create", help="create a key for a workspace")
    create.add_argument("--workspace", required=True, help="the workspace the key reads and writes")
    create.add_argument("--name", help="who acts with it (createdBy, the audit trail); default: the workspace")
    create.add_argument("--role", default="write", choices=ROLES, help="read, write (default) or admin")
    data_dir(create)
    create.set_defaults(func=cmd_keys_create)
    listed = keys.add_parser("list", help="every key: name, role, workspace, created, last used (never the key)")
    listed.add_argument("--workspace", help="only this workspace's keys")
    data_dir(listed)
    listed.set_defaults(func=cmd_keys_list)
    revoke = keys.add_parser("revoke", help="revoke a key (it stops working at once locally)")
    revoke.add_argument("key", help="the key, its id (keys list), or - to read it from standard input")
    data_dir(revoke)
    revoke.set_defaults(func=cmd_keys_revoke)

    audit = commands.add_parser("audit", help="the audit trail of a workspace, newest first")
    audit.add_argument("--workspace", required=True, help="the workspace")
    audit.add_argument("--key", help="only this key's entries (its name)")
    audit.add_argument("--action", choices=AUDIT_ACTIONS, help="only this action")
    audit.add_argument("--since", help="at or after (ISO-8601: 2026-12-01 or 2026-12-01T09:00:00Z)")
    audit.add_argument("--until", help="at or before (ISO-8601)")
    audit.add_argument("--limit", type=int, default=50, help="entries at most (default 50)")
    audit.add_argument("--json", action="store_true", help="one JSON object an entry")
    data_dir(audit)
    audit.set_defaults(func=cmd_audit)

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

    ingest = commands.add_parser("ingest", help="load event or request JSON files (or folders, .jsonl)")
    ingest.add_argument("paths", nargs="+", help="files or folders: EventBridge events, API requests, JSON or JSONL")
    ingest.add_argument("--workspace", default="demo", help="the workspace to load them into (default demo)")
    ingest.add_argument("--failures", default="ingest-failures.jsonl", help="where to write the failure report")
    data_dir(ingest)
    ingest.set_defaults(func=cmd_ingest)

    imports = commands.add_parser(
        "import", help="bring a team's history in: a git clone, GitHub's API, Vercel's deployments"
    ).add_subparsers(dest="import_command", required=True)

    def import_target(p: argparse.ArgumentParser) -> None:
        p.add_argument("--workspace", help="the embedded store's workspace (default: the repository's, owner.name)")
        p.add_argument("--api-url", help="write to a running API (a stack's ApiUrl); its key names the workspace")
        p.add_argument("--key", help="with --api-url: its API key (default NM_API_KEY)")
        p.add_argument("--failures", default="import-failures.jsonl", help="where to write the failure report")
        data_dir(p)
        verbose(p)

    def api_source(p: argparse.ArgumentParser, api_base: str, api_help: str, since_help: str) -> None:
        """What an importer reading a REST API takes: its address, ``--since``, ``--restart``."""
        p.add_argument("--api-base", default=api_base, help=api_help)
        p.add_argument("--since", type=_since, help=since_help)
        p.add_argument(
            "--restart", action="store_true", help="ignore the cursor of an earlier run and read everything again"
        )
        import_target(p)

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
    import_git.add_argument("--since", type=_since, help="only commits on or after this ISO-8601 date")
    import_git.add_argument(
        "--restart", action="store_true", help="read from the first commit, not after an interrupted run's last"
    )
    import_target(import_git)
    import_git.set_defaults(func=cmd_import_git)

    import_github = imports.add_parser(
        "github",
        help="GitHub's API (token in GITHUB_TOKEN or GH_TOKEN): closed PRs with files, reviewers and merger; "
        "issues with comments; releases",
    )
    import_github.add_argument("repo", help="owner/name")
    api_source(
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
    api_source(
        import_vercel,
        os.environ.get("VERCEL_API_URL", "https://api.vercel.com"),
        "the API's address (default VERCEL_API_URL or api.vercel.com)",
        "only deployments created on or after this ISO-8601 date",
    )
    import_vercel.set_defaults(func=cmd_import_vercel)

    replay = commands.add_parser("replay", help="ingest again what a failure report lists")
    replay.add_argument("report", help="a failure report written by ingest or replay")
    replay.add_argument("--workspace", default="demo", help="the workspace to load them into (default demo)")
    replay.add_argument("--failures", help="where to write what still fails (default: the report itself)")
    data_dir(replay)
    replay.set_defaults(func=cmd_replay)

    dlq = commands.add_parser("dlq-replay", help="AWS: move dead-lettered ingest messages back to the queue")
    dlq.add_argument("--dlq-url", required=True, help="the dead-letter queue's URL (stack output)")
    dlq.add_argument("--queue-url", required=True, help="the ingest queue's URL to move the messages back to")
    dlq.add_argument("--limit", type=int, help="at most this many messages (default: all)")
    dlq.set_defaults(func=cmd_dlq_replay)

    search = commands.add_parser("search", help="search a workspace (embedded, or a remote API with --url/--key)")
    search.add_argument("query", help="what to look for, in words")
    search.add_argument("--workspace", help="embedded store's workspace (default: the repository's memory, else demo)")
    search.add_argument("--source", action="append", help="source (repeatable): github, vercel, manual, agent...")
    search.add_argument("--type", action="append", help="observation type (repeatable)")
    search.add_argument("--actor", action="append", help="actor name (repeatable)")
    search.add_argument("--tier", action="append", choices=["A", "C", "E"], help="tier (repeatable)")
    search.add_argument("--since", type=_since, help="only observations on or after this ISO-8601 date")
    search.add_argument(
        "--mode", default="hybrid", choices=["hybrid", "semantic", "keyword"], help="retrieval (default hybrid)"
    )
    search.add_argument("--top-k", type=int, default=10, help="results at most (default 10)")
    search.add_argument("--json", action="store_true", help="print the API's JSON reply")
    remote(search)
    data_dir(search)
    verbose(search)
    search.set_defaults(func=cmd_search)

    ask = commands.add_parser("ask", help="an answer from the memory, with the sources it cites")
    ask.add_argument("question", help="the question, as you would ask a teammate")
    ask.add_argument("--top-k", type=int, default=5, help="memories the answer may cite (default 5)")
    who = commands.add_parser("who", help="who knows a subject, with the memories that show it")
    who.add_argument("subject", help="the subject (a path, a feature), or the question as asked")
    who.add_argument("--top-k", type=int, default=5, help="people at most (default 5)")
    who.add_argument("--evidence", type=int, default=3, help="memories shown per person (default 3)")
    for asking, run in ((ask, cmd_ask), (who, cmd_who)):
        asking.add_argument("--workspace", help="the embedded store's workspace (default: the repository's memory)")
        asking.add_argument("--json", action="store_true", help="print the API's JSON reply")
        remote(asking)
        data_dir(asking)
        verbose(asking)
        asking.set_defaults(func=run)

    mcp = commands.add_parser("mcp", help="serve the memory to agents over MCP (stdio, or --http)")
    mcp.add_argument("--workspace", help="the embedded store's workspace the tools read and write")
    remote(mcp)
    mcp.add_argument(
        "--http", action="store_true", help="streamable HTTP on --host/--port (path /mcp) instead of stdio"
    )
    mcp.add_argument(
        "--host",
        default="127.0.0.1",
        help="with --http: bind address (default loopback only: the endpoint has no authentication of its own)",
    )
    mcp.add_argument("--port", type=int, default=8765, help="with --http: port (default 8765)")
    mcp.add_argument(
        "--structured-content",
        action="store_true",
        help="also return the API's JSON reply as each tool's structured content (for applications; Claude Code "
        "would show the model that JSON instead of the compact text)",
    )
    data_dir(mcp)
    mcp.set_defaults(func=cmd_mcp)

    agents = commands.add_parser(
        "agents", help="coding agents that remember: Claude Code's MCP server and hooks in a project"
    ).add_subparsers(dest="agents_command", required=True)
    for name, helped, run in (
        (
            "install",
            "write the MCP server, the hooks and the key into the project (merged, idempotent)",
            cmd_agents_install,
        ),
        ("uninstall", "remove exactly what install wrote", cmd_agents_uninstall),
        ("status", "what is installed and whether the memory answers (exit 1 if not)", cmd_agents_status),
    ):
        command = agents.add_parser(name, help=helped)
        command.add_argument("agent", choices=["claude-code"], help="the agent (claude-code)")
        command.add_argument("--project", default=".", help="the project folder (default: here)")
        if name == "install":
            command.add_argument(
                "--url", help="a running API (default: the one the committed files name, else the repository's memory)"
            )
            command.add_argument(
                "--import-history",
                action=argparse.BooleanOptionalAction,
                help="bring the repository's git history into the memory now (default: asked on a terminal)",
            )
            command.add_argument(
                "--key",
                help="its API key, written to .claude/settings.local.json only (default: NM_API_KEY at run time)",
            )
            command.add_argument(
                "--data-dir", help="an embedded store's folder (default: the repository's, .neural-memory at its root)"
            )
            command.add_argument("--workspace", help="with --data-dir: the workspace (default: the repository's)")
            command.add_argument(
                "--budget-tokens", type=int, help="what a session's brief or a prompt's recall may add (default 1500)"
            )
            command.add_argument(
                "--mcp",
                choices=["auto", "http", "process"],
                default="auto",
                help="with --url: Claude Code's MCP server is the API's own /mcp over HTTP (http) or a local "
                "`neural-memory mcp` process (process); auto (default): http when the API serves /mcp",
            )
        command.set_defaults(func=run)

    purge = commands.add_parser(
        "purge",
        help="the daily maintenance: C past its window loses its vectors (or goes, under "
        "NM_COLLABORATIVE_AFTER_WINDOW=delete), old E is archived",
    )
    data_dir(purge)
    purge.set_defaults(func=cmd_purge)

    scrub = commands.add_parser(
        "scrub",
        help="redact secrets in what was stored before redaction (re-embedding what changed, resumable); "
        "embedded store: then compact its files (run while no serve or mcp uses the folder)",
    )
    scrub.add_argument("--workspace", help="only this workspace (default: every one)")
    data_dir(scrub)
    scrub.set_defaults(func=cmd_scrub)

    reindex = commands.add_parser(
        "reindex",
        help="rebuild the store for the configured embedding model while the old vectors serve (resumable); "
        "OpenSearch: also a new mapping, each workspace's index behind its alias",
    )
    reindex.add_argument(
        "--batch", type=int, default=100, help="observations (embedded store: chunks) embedded and written at a time"
    )
    reindex.add_argument("--list", action="store_true", help="list the physical indices and which one is live")
    reindex.add_argument("--drop", metavar="INDEX", help="delete an old physical index (never the live one)")
    reindex.add_argument(
        "--force", action="store_true", help="move the alias even though some observations were refused (listed)"
    )
    data_dir(reindex)
    reindex.set_defaults(func=cmd_reindex)

    migrate_index = commands.add_parser(
        "migrate-index",
        help="OpenSearch: copy the single index of earlier versions into an index per workspace "
        "(never overwrites what a workspace index holds; the old index is kept)",
    )
    migrate_index.add_argument(
        "--again", action="store_true", help="copy again an index already migrated (catch up what old writers wrote)"
    )
    data_dir(migrate_index)
    migrate_index.set_defaults(func=cmd_migrate_index)

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

    models = commands.add_parser(
        "models", help="local models: the bundled ones, and stronger ones pulled from the public model hub"
    ).add_subparsers(dest="models_command", required=True)
    models_list = models.add_parser("list", help="every local model, where it comes from, pulled or not, in use")
    models_list.add_argument("--data-dir", help="the data folder (env NM_DATA_DIR, default .neural-memory)")
    models_list.set_defaults(func=cmd_models_list)
    models_pull = models.add_parser(
        "pull", help="download a model from the hub into the data folder, checking each file's pinned sha256"
    )
    models_pull.add_argument("name", help="a model `models list` shows as pullable")
    models_pull.add_argument("--data-dir", help="the data folder (env NM_DATA_DIR, default .neural-memory)")
    models_pull.add_argument(
        "--hub-url", help="the hub's address (env NM_MODEL_HUB_URL, default https://huggingface.co): a mirror"
    )
    models_pull.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="give up after this long in all (env NM_MODEL_PULL_TIMEOUT_S, default 1800); what was received resumes",
    )
    models_pull.set_defaults(func=cmd_models_pull)

    openapi = commands.add_parser("openapi", help="print the OpenAPI document")
    openapi.set_defaults(func=cmd_openapi)

    def folder(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data-dir", help="the embedded store's folder (env NM_DATA_DIR, default .neural-memory)")

    backup = commands.add_parser("backup", help="copy the data folder into DEST, consistent while servers run")
    backup.add_argument("destination", metavar="DEST", help="a new (or empty) folder for the copy")
    folder(backup)
    backup.set_defaults(func=cmd_backup)
    restore = commands.add_parser("restore", help="replace the data folder with a backup (no process may use it)")
    restore.add_argument("source", metavar="SRC", help="a folder `neural-memory backup` made")
    folder(restore)
    restore.set_defaults(func=cmd_restore)
    check = commands.add_parser("check", help="integrity, schema, saved index and file modes; exit 1 on a problem")
    folder(check)
    check.set_defaults(func=cmd_check)
    return parser
