"""``neural-memory``: run the local API, manage keys, ingest files and search from the terminal."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import SearchResponse
    from neural_memory.settings import Settings

INGEST_BATCH = 64


def _settings(args: argparse.Namespace) -> Settings:
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


def _progress(total: int, unit: str, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, disable=None)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def cmd_serve(args: argparse.Namespace) -> int:
    """Start the local API with the demo workspace and samples."""
    import faulthandler
    import signal

    from neural_memory.clock import utcnow
    from neural_memory.local.demo import DEMO_WORKSPACE, ensure_demo
    from neural_memory.local.gateway import LocalGateway
    from neural_memory.local.server import LocalApiServer
    from neural_memory.service import build_service, set_service
    from neural_memory.stores import build_key_store, ensure_store

    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 <pid>` prints every thread's stack: why is it stuck?
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    # `docker stop`, systemd and supervisors stop with SIGTERM: stop as on Ctrl-C, saving the index.
    signal.signal(signal.SIGTERM, _interrupt)
    settings = _settings(args)
    service = build_service(settings)
    set_service(service)
    keys = build_key_store(settings)
    index = ensure_store(settings, service.embedder)
    if service.embedder is not None:
        service.embedder.embed(["warm up"], "search_query")  # load the model before the first request
    samples = None if args.no_samples else Path(args.samples)
    demo = ensure_demo(service, keys, settings.data_dir, samples, utcnow())
    concurrency = settings.serve_concurrency
    gateway = LocalGateway(keys, concurrency=concurrency)
    server = LocalApiServer((args.host, args.port), gateway, settings.max_body_bytes, args.quiet, threads=concurrency)
    where = (
        f"OpenSearch {settings.opensearch_url} index {settings.opensearch_index} ({index})"
        if settings.store == "opensearch"
        else settings.sqlite_path
    )
    print(f"Neural Memory local API on {server.url}  (store: {where})", flush=True)
    print(f"  workspace {DEMO_WORKSPACE!r}: {demo.loaded} sample observations loaded", flush=True)
    if demo.key:
        note = "new key" if demo.created_key else "key"
        print(f"  demo {note} (also in {demo.key_file}):", flush=True)
        print(f"  {demo.key}", flush=True)
    print(f"  {concurrency} requests at once (--concurrency)", flush=True)
    print(f"  Console: {server.url}/console  (paste the key above)", flush=True)
    print(f"  OpenAPI: {server.url}/openapi.json   Ctrl-C to stop", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
        # The embedded store saves its in-memory index, so the next start is instant; closing every
        # connection lets the last process out checkpoint the WAL into the database and remove it.
        for closable in (service.store, keys, service.embedding_cache):
            if (close := getattr(closable, "close", None)) is not None:
                close()
    return 0


def cmd_keys_create(args: argparse.Namespace) -> int:
    """Create an API key for a workspace; the key is the last line printed."""
    from neural_memory.clock import utcnow
    from neural_memory.keys import issue_key
    from neural_memory.stores import build_key_store

    settings = _settings(args)
    try:
        key = issue_key(build_key_store(settings), args.workspace, utcnow())
    except ValueError as exc:
        print(f"error: --workspace: {exc}", file=sys.stderr)
        return 2
    print(f"API key for workspace {args.workspace!r} (shown once; only its hash is stored):")
    print(key)
    return 0


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


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    """Revoke an API key (read from standard input when KEY is ``-``, so it stays out of shell history)."""
    from neural_memory.clock import utcnow
    from neural_memory.keys import revoke
    from neural_memory.stores import build_key_store

    key = sys.stdin.readline().strip() if args.key == "-" else args.key
    if not revoke(build_key_store(_settings(args)), key, utcnow()):
        print("error: no such key, or it is already revoked", file=sys.stderr)
        return 1
    print("revoked")
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    """Load observations from event or request files into a workspace; failures go to a report."""
    from neural_memory.ingest.files import expand, load_file

    files = expand(Path(p) for p in args.paths)
    loaded = []
    with _progress(len(files), "file", "reading") as bar:
        for path in files:
            loaded.extend(load_file(path))
            bar.update(1)
    return _index(args, loaded)


def cmd_replay(args: argparse.Namespace) -> int:
    """Ingest again the documents of a failure report; what still fails is written back to it."""
    from neural_memory.ingest.runner import read_failures

    args.failures = args.failures or args.report
    return _index(args, read_failures(Path(args.report)))


def _index(args: argparse.Namespace, loaded: list[Any]) -> int:
    from neural_memory.ingest.runner import ingest_loaded, write_failures
    from neural_memory.service import build_service

    service = build_service(_settings(args))
    total = sum(len(item.observations) for item in loaded)
    with _progress(total, "obs", "indexing") as bar:
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
        f"{len(report.failures)} failed; workspace {args.workspace!r} holds {held} observations"
    )
    return 1 if report.failures else 0


def cmd_dlq_replay(args: argparse.Namespace) -> int:
    """Move dead-lettered ingest messages back to the ingest queue (AWS credentials needed)."""
    from neural_memory.ingest.dlq import redrive

    with _progress(args.limit or 0, "msg", "replaying") as bar:
        moved = redrive(args.dlq_url, args.queue_url, limit=args.limit, progress=bar.update)
    print(f"moved {moved} messages from the dead-letter queue back to the ingest queue")
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    """Search a workspace from the terminal: the embedded store, or a remote API (``--url/--key``)."""
    filters: dict[str, Any] = {}
    for flag, name in (
        ("source", "sourceTypes"),
        ("type", "observationTypes"),
        ("actor", "actorNames"),
        ("tier", "tiers"),
    ):
        if getattr(args, flag):
            filters[name] = getattr(args, flag)
    if args.since:
        filters["dateRange"] = {"start": args.since}
    body = {"query": args.query, "topK": args.top_k, "mode": args.mode, "filters": filters or None}
    if args.url or args.key:
        if args.workspace:
            print("error: --workspace: a remote API's key names the workspace", file=sys.stderr)
            return 2
        code, reply = _search_remote(args, body)
    else:
        code, reply = _search_embedded(args, body)
    if reply is None:
        return code
    if args.json:
        print(reply.model_dump_json(by_alias=True, indent=2))
        return 0
    for n, result in enumerate(reply.results, 1):
        when = result.occurred_at.strftime("%Y-%m-%d %H:%M")
        print(f"{n:>2}. {result.score:.3f}  {when}  {result.source}/{result.observation_type}  {result.title}")
        print(f"    {result.snippet}")
    latency = reply.latency
    print(
        f"{len(reply.results)} results in {latency.total} ms "
        f"(embed {latency.embed}, retrieval {latency.retrieval})"
        + (f"; degraded: {reply.degraded}" if reply.degraded else "")
    )
    return 0


def _search_embedded(args: argparse.Namespace, body: dict[str, Any]) -> tuple[int, SearchResponse | None]:
    from neural_memory.errors import NeuralMemoryError
    from neural_memory.models import SearchRequest
    from neural_memory.service import build_service

    try:
        request = SearchRequest.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        print(f"error: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}", file=sys.stderr)
        return 2, None
    try:
        return 0, build_service(_settings(args)).search(args.workspace or "demo", request, "cli")
    except NeuralMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1, None


def _search_remote(args: argparse.Namespace, body: dict[str, Any]) -> tuple[int, SearchResponse | None]:
    from neural_memory.client import ApiError, ClientConfigurationError, ClientError, NeuralMemoryClient

    try:
        with NeuralMemoryClient(args.url, args.key) as client:
            query = body.pop("query")
            return 0, client.search(query, options={k: v for k, v in body.items() if v is not None})
    except ClientConfigurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2, None
    except ApiError as exc:
        print(f"error: {exc.code}: {exc.message} (request {exc.request_id})", file=sys.stderr)
        return 2 if exc.status == 400 else 1, None
    except ClientError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1, None


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the memory to agents over MCP: stdio (default) or streamable HTTP (``--http``), from
    the embedded store in-process (``--workspace``) or a remote API (``--url/--key``)."""
    import anyio

    from neural_memory.mcp_server.backends import EmbeddedBackend, MemoryBackend, RemoteBackend
    from neural_memory.mcp_server.tools import build_server

    backend: MemoryBackend
    if args.url or args.key:
        from neural_memory.client import AsyncNeuralMemoryClient, ClientConfigurationError

        if args.workspace:
            print("error: --workspace: a remote API's key names the workspace", file=sys.stderr)
            return 2
        try:
            backend = RemoteBackend(AsyncNeuralMemoryClient(args.url, args.key))
        except ClientConfigurationError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    else:
        from neural_memory.service import build_service
        from neural_memory.stores import ensure_store

        if not args.workspace:
            print("error: --workspace is needed for the embedded store (or --url/--key for an API)", file=sys.stderr)
            return 2
        settings = _settings(args)
        service = build_service(settings)  # the factory `serve` uses: same store, model and providers
        ensure_store(settings, service.embedder)
        backend = EmbeddedBackend(service, args.workspace)
    server = build_server(backend)

    import signal

    async def stop_on_signal() -> None:
        # An agent stopping its server sends SIGTERM while stdin may still be open: the SDK's reader
        # thread is blocked on it and cannot be cancelled, so the store is closed here and the
        # process ends (a supervisor would otherwise wait, then kill it before the store is saved).
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for _ in signals:
                await backend.close()
                os._exit(0)

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(stop_on_signal)
            try:
                if args.http:
                    print(f"Neural Memory MCP on http://{args.host}:{args.port}/mcp", file=sys.stderr, flush=True)
                    await server.run_streamable_http_async(host=args.host, port=args.port)
                else:
                    await server.run_stdio_async()
            finally:
                group.cancel_scope.cancel()
                with anyio.CancelScope(shield=True):
                    await backend.close()  # in the same event loop as the calls (the client's pool lives there)

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(run)
    return 0


def cmd_purge(args: argparse.Namespace) -> int:
    """Delete expired observations (C tier, 7 days after they occurred) from the store."""
    from neural_memory.clock import utcnow
    from neural_memory.service import build_service

    purged = build_service(_settings(args)).purge_expired(utcnow())
    print(f"purged {purged} expired observations")
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    """OpenSearch: list the physical indices behind the alias, drop an old one, or rebuild the live
    one for the configured model and mapping (resumable; the alias moves when it is complete)."""
    from neural_memory.reindex import Reindexer
    from neural_memory.service import build_service
    from neural_memory.stores import build_admin
    from neural_memory.stores.opensearch_index import ReindexBusy

    settings = _settings(args)
    admin = build_admin(settings)
    if admin is None:
        print("reindex is for the OpenSearch store (--store opensearch): the embedded store keeps "
              "each model's vectors apart and needs none", file=sys.stderr)  # fmt: skip
        return 2
    if args.drop:
        admin.drop(args.drop)
        print(f"dropped {args.drop}")
        return 0
    if args.list:
        live = admin.live()
        for name in [*([live] if live and live not in admin.versions() else []), *admin.versions()]:
            meta = admin.meta(name)
            state = "live" if name == live else "reindexing" if "reindex" in meta else "old"
            print(f"{name}\t{state}\tmodel {meta.get('model_id')} ({meta.get('dimension')} dims), "
                  f"schema {meta.get('schema_version')}")  # fmt: skip
        return 0
    service = build_service(settings)
    bar = None

    def progress(copied: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = _progress(total, "obs", "reindex")
        bar.update(copied - bar.n)

    try:
        report = Reindexer(service, admin, batch_size=args.batch).run(progress=progress, force=args.force)
    except ReindexBusy as busy:
        print(f"not now: {busy}", file=sys.stderr)
        return 1
    finally:
        if bar is not None:
            bar.close()
    print(report.summary())
    for (workspace, observation), reason in list(report.failed.items())[:20]:
        print(f"  refused {workspace}/{observation}: {reason}", file=sys.stderr)
    if report.swapped and report.source:
        print(f"the old index {report.source} is kept: `neural-memory reindex --drop {report.source}` deletes it")
    return 0 if report.swapped or report.source is None else 1


def cmd_eval(args: argparse.Namespace) -> int:
    """Score retrieval on a BEIR-layout or a LoCoMo-layout dataset; the last line is one JSON object."""
    from neural_memory.local import conversations

    folder = Path(args.dataset)
    if conversations.is_conversation_dataset(folder):
        result = conversations.run(folder, args.mode, args.rerank, _settings(args))
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
    from neural_memory.local.evaluation import run

    result = run(folder, args.mode, args.rerank, args.split, _settings(args))
    if not args.json:
        print(
            f"{result['mode']} ({result['split']}, {result['queries']} queries): "
            f"nDCG@10 {result['ndcg@10']:.4f}, recall@100 {result['recall@100']:.4f}"
        )
    print(json.dumps(result))
    return 0


def cmd_openapi(args: argparse.Namespace) -> int:
    """Print the merged OpenAPI document."""
    from neural_memory.local.gateway import openapi_document

    print(json.dumps(openapi_document(), indent=2, sort_keys=True))
    return 0


def _since(value: str) -> str:
    """Validate ``--since`` early: an ISO-8601 date or datetime (UTC if no zone)."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO-8601 date: {value!r}") from exc
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    from neural_memory.ingest.routing import ROUTES_FILE

    parser = argparse.ArgumentParser(prog="neural-memory", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    def data_dir(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data-dir", help="embedded store folder (env NM_DATA_DIR, default .neural-memory)")
        p.add_argument("--embedder", choices=["onnx", "cohere", "none"], help="embedding provider (env NM_EMBEDDER)")
        p.add_argument("--store", choices=["sqlite", "opensearch"], help="store (env NM_STORE, default sqlite)")
        p.add_argument("--opensearch-url", help="OpenSearch endpoint when --store opensearch (env NM_OPENSEARCH_URL)")

    def remote(p: argparse.ArgumentParser) -> None:
        # The flags choose the remote API; the variables only fill in the one not given, so a
        # shell that exports them for the MCP server still searches the local store by default.
        p.add_argument(
            "--url", help="a remote API (a stack's ApiUrl or http://127.0.0.1:8080); NM_API_URL if only --key is given"
        )
        p.add_argument("--key", help="its API key, which names the workspace; NM_API_KEY when only --url is given")

    serve = commands.add_parser("serve", help="run the local API")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default loopback only)")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--samples", default="events", help="folder of sample events to load into 'demo'")
    serve.add_argument("--no-samples", action="store_true", help="do not load sample events")
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
    create.add_argument("--workspace", required=True)
    data_dir(create)
    create.set_defaults(func=cmd_keys_create)
    revoke = keys.add_parser("revoke", help="revoke a key (it stops working at once locally)")
    revoke.add_argument("key", help="the key, or - to read it from standard input")
    data_dir(revoke)
    revoke.set_defaults(func=cmd_keys_revoke)

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
            command.add_argument("workspace")
        command.add_argument("--file", default=str(ROUTES_FILE), help=f"the routing table (default ./{ROUTES_FILE})")
        command.set_defaults(func=cmd_routes)

    ingest = commands.add_parser("ingest", help="load event or request JSON files (or folders, .jsonl)")
    ingest.add_argument("paths", nargs="+")
    ingest.add_argument("--workspace", default="demo")
    ingest.add_argument("--failures", default="ingest-failures.jsonl", help="where to write the failure report")
    data_dir(ingest)
    ingest.set_defaults(func=cmd_ingest)

    replay = commands.add_parser("replay", help="ingest again what a failure report lists")
    replay.add_argument("report", help="a failure report written by ingest or replay")
    replay.add_argument("--workspace", default="demo")
    replay.add_argument("--failures", help="where to write what still fails (default: the report itself)")
    data_dir(replay)
    replay.set_defaults(func=cmd_replay)

    dlq = commands.add_parser("dlq-replay", help="AWS: move dead-lettered ingest messages back to the queue")
    dlq.add_argument("--dlq-url", required=True)
    dlq.add_argument("--queue-url", required=True)
    dlq.add_argument("--limit", type=int, help="at most this many messages (default: all)")
    dlq.set_defaults(func=cmd_dlq_replay)

    search = commands.add_parser("search", help="search a workspace (embedded, or a remote API with --url/--key)")
    search.add_argument("query")
    search.add_argument("--workspace", help="embedded store's workspace (default demo)")
    search.add_argument("--source", action="append", help="source (repeatable): github, vercel, ...")
    search.add_argument("--type", action="append", help="observation type (repeatable)")
    search.add_argument("--actor", action="append", help="actor name (repeatable)")
    search.add_argument("--tier", action="append", choices=["A", "C", "E"])
    search.add_argument("--since", type=_since, help="only observations on or after this ISO-8601 date")
    search.add_argument("--mode", default="hybrid", choices=["hybrid", "semantic", "keyword"])
    search.add_argument("--top-k", type=int, default=10)
    search.add_argument("--json", action="store_true", help="print the API's JSON reply")
    remote(search)
    data_dir(search)
    search.set_defaults(func=cmd_search)

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
    data_dir(mcp)
    mcp.set_defaults(func=cmd_mcp)

    purge = commands.add_parser("purge", help="delete expired observations")
    data_dir(purge)
    purge.set_defaults(func=cmd_purge)

    reindex = commands.add_parser(
        "reindex", help="OpenSearch: rebuild the index for a new model or mapping behind its alias (resumable)"
    )
    reindex.add_argument("--batch", type=int, default=100, help="observations embedded and written at a time")
    reindex.add_argument("--list", action="store_true", help="list the physical indices and which one is live")
    reindex.add_argument("--drop", metavar="INDEX", help="delete an old physical index (never the live one)")
    reindex.add_argument(
        "--force", action="store_true", help="move the alias even though some observations were refused (listed)"
    )
    data_dir(reindex)
    reindex.set_defaults(func=cmd_reindex)

    evaluate = commands.add_parser(
        "eval", help="nDCG@10 and recall@100 on a BEIR dataset; evidence recall@10 and hit@10 on LoCoMo"
    )
    evaluate.add_argument(
        "dataset",
        help="folder with corpus.jsonl[.gz], queries.jsonl, qrels/<split>.tsv (BEIR), or a LoCoMo *.json[.gz]",
    )
    evaluate.add_argument("--mode", default="hybrid", choices=["hybrid", "semantic", "keyword"])
    evaluate.add_argument("--rerank", default="fast", choices=["fast", "balanced", "thorough"])
    evaluate.add_argument("--split", default="test", help="qrels file to score (tune on train, report test)")
    evaluate.add_argument("--json", action="store_true", help="print only the JSON line")
    data_dir(evaluate)
    evaluate.set_defaults(func=cmd_eval)

    openapi = commands.add_parser("openapi", help="print the OpenAPI document")
    openapi.set_defaults(func=cmd_openapi)
    from neural_memory.local.folder_commands import add_parsers

    add_parsers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``neural-memory`` console script."""
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        # Concurrent searches each scan on their own thread; BLAS's own helper threads would only
        # oversubscribe the cores (measured: 6 clients p95 173 -> 130 ms at 100k, 1 client unchanged).
        for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(variable, "1")
        # EMF lines are for CloudWatch, and Powertools keeps one metric set per process, which
        # the server's concurrent handler instances would mix; latency is in every reply.
        os.environ["POWERTOOLS_METRICS_DISABLED"] = "true"
    else:
        # EMF lines belong to the API's logs, not to a terminal command's output.
        os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
