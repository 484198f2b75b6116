"""``neural-memory mcp``: the MCP server over stdio or streamable HTTP."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from neural_memory.local.agents.repository_memory import repository_memory
from neural_memory.local.cli.common import cli_settings
from neural_memory.local.cli.flags import data_dir, remote

if TYPE_CHECKING:
    import argparse

    from neural_memory.agent_tools.provenance import Provenance
    from neural_memory.local.cli.flags import Commands


def session_provenance() -> Provenance:
    """The repository this server runs in (its working folder's origin) and the person (``NM_AGENT_USER``,
    else git's ``user.name``): what a ``remember`` without them is saved with."""
    from neural_memory.agent_tools.provenance import Provenance
    from neural_memory.local.agents.claude_code import git_user
    from neural_memory.local.agents.repository import read_repository, work_tree_root

    root = work_tree_root(Path.cwd())
    repository = read_repository(root).name if root is not None else None
    return Provenance.of(repository, os.environ.get("NM_AGENT_USER") or (git_user(root) if root else ""))


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the memory to agents over MCP: stdio (default) or streamable HTTP (``--http``), from
    the embedded store in-process (``--workspace``) or a remote API (``--url/--key``)."""
    import anyio

    from neural_memory.local.mcp_server.backends import EmbeddedBackend, MemoryBackend, RemoteBackend
    from neural_memory.local.mcp_server.stdio import run_stdio
    from neural_memory.local.mcp_server.tools import build_server

    backend: MemoryBackend
    if args.url or args.key:
        from neural_memory.local.client import AsyncNeuralMemoryClient, ClientConfigurationError

        if args.workspace:
            print("error: --workspace: a remote API's key names the workspace", file=sys.stderr)
            return 2
        try:
            backend = RemoteBackend(AsyncNeuralMemoryClient(args.url, args.key))
        except ClientConfigurationError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    else:
        from neural_memory.runtime import build_service
        from neural_memory.stores.factory import ensure_store

        if not args.workspace:
            args.workspace = os.environ.get("NM_WORKSPACE")  # agents install's, for a folder it was given
        if not args.workspace:
            memory = repository_memory(Path.cwd(), args.data_dir)
            if memory is None or not memory.exists():
                print(
                    "error: --workspace is needed for the embedded store (or --url/--key for an API): "
                    "here is no repository's memory (neural-memory import git . makes one)",
                    file=sys.stderr,
                )
                return 2
            args.workspace, args.data_dir = memory.workspace, str(memory.data_dir)
        settings = cli_settings(args)
        service = build_service(settings)  # the factory `serve` uses: same store, model and providers
        ensure_store(settings, service.embedder)
        backend = EmbeddedBackend(service, args.workspace)
    server = build_server(backend, structured_content=args.structured_content, provenance=session_provenance())

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
                    from neural_memory.local.mcp_server.http_guard import guard_settings, serve_http

                    print(f"Neural Memory MCP on http://{args.host}:{args.port}/mcp", file=sys.stderr, flush=True)
                    # the SDK's server, with slow clients bounded as `serve` bounds them
                    await serve_http(server, args.host, args.port, **guard_settings(cli_settings(args)))
                else:
                    await run_stdio(server)  # the SDK's, but every malformed line is answered
            finally:
                group.cancel_scope.cancel()
                with anyio.CancelScope(shield=True):
                    await backend.close()  # in the same event loop as the calls (the client's pool lives there)

    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(run)
    return 0


def register(commands: Commands) -> None:
    """``mcp``: stdio, or streamable HTTP with ``--http``."""
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
