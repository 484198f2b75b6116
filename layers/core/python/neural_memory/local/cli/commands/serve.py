"""``neural-memory serve``: the local API (the functions' own handlers behind the local gateway)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from neural_memory.local.cli.common import cli_settings, interrupt
from neural_memory.local.cli.flags import data_dir

if TYPE_CHECKING:
    import argparse

    from neural_memory.local.cli.flags import Commands
    from neural_memory.local.serving.demo import Demo

# How long a thread that holds the GIL keeps it from one that waits (Python's default: 5 ms). A
# search takes the GIL back after each SQLite read and model run; beside a bulk write's redaction
# and vetting (pure Python, ~130 ms a 50-observation batch) each take waited up to 5 ms.
GIL_SWITCH_S = 0.0005


def address_problem(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host:port`` (in use, not an address of this machine),
    found before anything is written into the data folder; None when it can."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as waitress binds
            probe.bind((host, port))
    except OSError as exc:
        return (
            f"cannot listen on {host}:{port}: {exc.strerror or exc}. Is another server running there? "
            f"Stop it, or choose another port: --port {port + 1} (make serve PORT={port + 1})"
        )
    return None


def demo_key_lines(demo: Demo) -> list[str]:
    """What a start says of the demo key: the key in full only on the start that creates it (a
    terminal's scrollback, a log file or a supervisor's journal keeps whatever a start prints),
    where it is on every later one."""
    if demo.key is None:
        return []
    if demo.created_key:
        return [f"demo new key (also in {demo.key_file}, mode 0600; printed this once):", demo.key]
    return [f"demo key: in {demo.key_file} (printed at the start that created it)"]


def _print_demo(demo: Demo | None) -> None:
    """What serve says about the demo workspace."""
    from neural_memory.local.serving.demo import DEMO_WORKSPACE

    if demo is None:
        print("  no demo workspace (--no-demo)", flush=True)
    elif demo.already:
        print(
            f"  workspace {DEMO_WORKSPACE!r}: the sample observations were loaded at an earlier start "
            "(--reload-samples, or make demo-reset, loads them again)",
            flush=True,
        )
    else:
        print(f"  workspace {DEMO_WORKSPACE!r}: {demo.loaded} sample observations loaded", flush=True)
    for line in demo_key_lines(demo) if demo is not None else []:
        print(f"  {line}", flush=True)


def cmd_serve(args: argparse.Namespace) -> int:
    """Start the local API with the demo workspace and samples."""
    import faulthandler
    import signal

    from neural_memory.auth.factory import build_key_store
    from neural_memory.clock import utcnow
    from neural_memory.local.serving.connection_guard import raise_open_file_limit
    from neural_memory.local.serving.demo import ensure_demo
    from neural_memory.local.serving.gateway import LocalGateway
    from neural_memory.local.serving.server import LocalApiServer
    from neural_memory.runtime import build_service, set_service
    from neural_memory.stores.factory import ensure_store

    if (problem := address_problem(args.host, args.port)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 <pid>` prints every thread's stack: why is it stuck?
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    # `docker stop`, systemd and supervisors stop with SIGTERM: stop as on Ctrl-C, saving the index.
    signal.signal(signal.SIGTERM, interrupt)
    sys.setswitchinterval(GIL_SWITCH_S)
    settings = cli_settings(args)
    service = build_service(settings)
    set_service(service)
    keys = build_key_store(settings)
    index = ensure_store(settings, service.embedder)
    if service.embedder is not None:
        service.embedder.embed(["warm up"], "search_query")  # load the model before the first request
    concurrency = settings.serve_concurrency
    gateway = LocalGateway(keys, concurrency=concurrency)
    connections = raise_open_file_limit(settings.serve_max_connections)
    try:  # listening first: a port taken since the check above leaves no demo key behind either
        server = LocalApiServer(
            (args.host, args.port),
            gateway,
            settings.max_body_bytes,
            args.quiet,
            threads=concurrency,
            max_connections=connections,
            head_timeout_s=settings.serve_head_timeout_s,
            request_timeout_s=settings.serve_request_timeout_s,
        )
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        service.close()
        return 1
    samples = None if args.no_samples else Path(args.samples)
    # --no-demo: a server only agents' own keys use (the hooks' background server): no demo key either
    demo = (
        None
        if args.no_demo
        else ensure_demo(service, keys, settings.data_dir, samples, utcnow(), reload=args.reload_samples)
    )
    maintenance = None
    if settings.maintenance_interval_hours > 0:
        from neural_memory.local.serving.maintenance import DailyMaintenance

        maintenance = DailyMaintenance(
            service, settings.maintenance_interval_hours * 3600, settings.maintenance_first_run_s
        )
        maintenance.start()
    where = (
        f"OpenSearch {settings.opensearch_url} index {settings.opensearch_index} ({index})"
        if settings.store == "opensearch"
        else settings.sqlite_path
    )
    print(f"Neural Memory local API on {server.url}  (store: {where})", flush=True)
    _print_demo(demo)
    print(
        f"  {concurrency} requests at once (--concurrency), up to {connections} connections; a request's head "
        f"within {settings.serve_head_timeout_s:g} s, the whole request within "
        f"{settings.serve_request_timeout_s:g} s, or it is dropped",
        flush=True,
    )
    whose = "a key of yours: neural-memory keys create --workspace W" if demo is None else "the demo key"
    print(f"  Console: {server.url}/console  (paste {whose})", flush=True)
    print(f"  MCP: {server.url}/mcp  (streamable HTTP; header Authorization: Bearer <key>)", flush=True)
    print(f"  OpenAPI: {server.url}/openapi.json   Ctrl-C to stop", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
        if maintenance is not None:
            maintenance.stop()
        # The embedded store saves its in-memory index, so the next start is instant; closing every
        # connection lets the last process out checkpoint the WAL into the database and remove it.
        service.close()
        if (close := getattr(keys, "close", None)) is not None:
            close()
    return 0


def register(commands: Commands) -> None:
    """``serve``: its flags, and the store's."""
    from neural_memory.ingest.routing import ROUTES_FILE

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
