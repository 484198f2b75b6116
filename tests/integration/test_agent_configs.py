"""The MCP configurations the README shows for Cursor, Codex CLI and Claude Desktop, parsed as each
agent parses its file (JSON, TOML) and started as it starts the server: the tools are there and
answer as text."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.helpers.mcp_sessions import TOOLS, agent_environment, text_of
from tests.helpers.readme import readme_block

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.integration

INSTALL = "/opt/neural-memory/.venv/bin/neural-memory"  # the README's example paths
DATA = "/home/you/.neural-memory"


def cursor() -> dict[str, Any]:
    config: dict[str, Any] = json.loads(readme_block("json", '"--workspace", "cursor"'))
    entry: dict[str, Any] = config["mcpServers"]["neural-memory"]
    return entry


def codex() -> dict[str, Any]:
    config = tomllib.loads(readme_block("toml", "[mcp_servers.neural-memory]"))
    entry: dict[str, Any] = config["mcp_servers"]["neural-memory"]
    return entry


def claude_desktop() -> dict[str, Any]:
    config: dict[str, Any] = json.loads(readme_block("json", '"--workspace", "desktop"'))
    entry: dict[str, Any] = config["mcpServers"]["neural-memory"]
    return entry


@pytest.mark.parametrize("agent", [cursor, codex, claude_desktop], ids=["cursor", "codex", "claude-desktop"])
def test_each_agents_configuration_starts_the_server_and_its_tools_answer(
    agent: Callable[[], dict[str, Any]], tmp_path: Path
) -> None:
    # Given the README's entry, with its example paths where this machine has them
    entry = agent()
    assert entry["command"] == INSTALL and entry["args"][0] == "mcp" and DATA in entry["args"]
    args = [str(tmp_path / "memory") if arg == DATA else arg for arg in entry["args"]]
    server = StdioServerParameters(
        command=str(Path(sys.executable).parent / "neural-memory"), args=args, env=agent_environment(), cwd=Path("/")
    )

    async def session() -> tuple[set[str], str]:
        async with Client(server) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            await client.call_tool(
                "remember", {"observations": [{"id": "n-1", "content": "Releases go out on Tuesdays."}]}
            )
            found = await client.call_tool("search_memory", {"query": "when do releases go out"})
            return names, text_of(found)

    # When the agent starts it from any folder, Then every tool is there and a search reads as text
    names, text = anyio.run(session)
    assert names == TOOLS
    assert text.startswith("1 memories for 'when do releases go out', best first:\n1. [n-1] ")
    workspace = entry["args"][entry["args"].index("--workspace") + 1]
    assert (tmp_path / "memory").is_dir() and workspace in {"cursor", "codex", "desktop"}
