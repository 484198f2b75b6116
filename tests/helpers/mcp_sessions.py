"""``neural-memory mcp`` as agents run it: a subprocess spoken to by the ``mcp`` SDK's own client,
over stdio or streamable HTTP, and what tests read from its tool results."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.client.stdio import StdioServerParameters

if TYPE_CHECKING:
    from collections.abc import Iterator

    from mcp_types import CallToolResult


BIN = Path(sys.executable).parent  # where `neural-memory` is installed (.venv/bin)
TOOLS = {"search_memory", "answer_question", "remember", "get_memory", "forget", "trace_decision", "who_knows"}


def agent_environment() -> dict[str, str]:
    """The environment an agent starts its server in: the user's, with ``neural-memory`` on PATH."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def stdio_server(args: list[str], cwd: Path | None = None, command: str = "neural-memory") -> StdioServerParameters:
    """The server started as an agent's configuration starts it: a command, its args, a folder."""
    return StdioServerParameters(command=command, args=args, env=agent_environment(), cwd=cwd)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def http_server(args: list[str], cwd: Path) -> Iterator[str]:
    """``neural-memory mcp --http`` on a free loopback port; yields its MCP endpoint URL."""
    port = free_port()
    command = [str(BIN / "neural-memory"), "mcp", "--http", "--port", str(port), *args]
    process = subprocess.Popen(command, cwd=cwd, env=agent_environment(), stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"mcp --http did not start: {process.communicate()[1]}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()


def text_of(result: CallToolResult) -> str:
    """The text a model reads from a tool result."""
    return "\n".join(getattr(block, "text", "") for block in result.content)


def structured(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful tool result."""
    assert not result.is_error, text_of(result)
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content
