"""``/mcp`` on the local server (``make serve``: waitress, the gateway, the authorizer, the mcp
function's handler): MCP's streamable HTTP transport, stateless, behind the API key, driven by the
``mcp`` SDK's own client as agents connect to it (``claude mcp add --transport http`` with an
Authorization header), with the stdio server's tools and replies."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from neural_memory.agent_tools.definitions import INSTRUCTIONS
from neural_memory.api.mcp_endpoint import PROTOCOL_VERSIONS
from neural_memory.auth.keys import key_problem
from neural_memory.local.client import AsyncNeuralMemoryClient
from neural_memory.local.mcp_server.backends import RemoteBackend
from neural_memory.local.mcp_server.tools import build_server

from tests.helpers.local_api import RunningApi, running_local_api
from tests.helpers.mcp_sessions import TOOLS, stdio_server, text_of
from tests.helpers.readme import readme_block

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from pathlib import Path

    from mcp.client.stdio import StdioServerParameters
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration

WRONG_KEY = "nm_000000000000_" + "A" * 43
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
NOTES = [
    {"id": "pin-sdk", "observationType": "decision", "actorName": "ana", "occurredAt": "2025-12-10T09:00:00Z",
     "title": "We pin the payments SDK at 4.2",
     "content": "We pin the payments SDK at version 4.2, because 4.3 broke partial refunds.",
     "metadata": {"commitSha": "9f2c4e1a7b3d5f60718293a4b5c6d7e8f9012345"}},
    {"id": "refund-bug", "observationType": "bug", "actorName": "ben", "occurredAt": "2025-12-09T15:00:00Z",
     "title": "Partial refunds fail on SDK 4.3",
     "content": "Partial refunds fail with a 500 after upgrading the payments SDK to 4.3.",
     "metadata": {"commitSha": "9f2c4e1a7b3d5f60718293a4b5c6d7e8f9012345"}},
    {"id": "deploy-day", "occurredAt": "2025-12-08T08:00:00Z",
     "content": "Deploys go out on Tuesdays after the morning stand-up."},
]  # fmt: skip


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxLocalEmbedder) -> Iterator[RunningApi]:
    """The real local server (waitress, the gateway, the handlers, SQLite, the local model)."""
    with running_local_api(tmp_path_factory.mktemp("mcp-http"), embedder, None) as running:
        yield running


@asynccontextmanager
async def _client(url: str, key: str, mode: str = "auto") -> AsyncIterator[Client]:
    """The official client over streamable HTTP, the key in the Authorization header."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as agent,
    ):
        yield agent


def _reply(result: Any) -> tuple[bool, str]:
    return bool(result.is_error), text_of(result)


async def _every_tool(url: str, key: str, mode: str) -> dict[str, Any]:
    async with _client(url, key, mode) as agent:
        tools = [
            tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in (await agent.list_tools()).tools
        ]
        calls = {
            "remember": await agent.call_tool("remember", {"observations": NOTES}),
            "search_memory": await agent.call_tool("search_memory", {"query": "which payments SDK version", "topK": 3}),
            "answer_question": await agent.call_tool(
                "answer_question", {"question": "Why is the payments SDK pinned?"}
            ),
            "get_memory": await agent.call_tool("get_memory", {"id": "pin-sdk"}),
            "who_knows": await agent.call_tool("who_knows", {"query": "payments SDK refunds"}),
            "trace_decision": await agent.call_tool("trace_decision", {"id": "pin-sdk"}),
            "forget": await agent.call_tool("forget", {"id": "deploy-day"}),
            "forgotten": await agent.call_tool("get_memory", {"id": "deploy-day"}),
        }
        served = {"instructions": agent.instructions, "server": agent.server_info, "version": agent.protocol_version}
        return {"tools": tools, **served, **{k: _reply(v) for k, v in calls.items()}}


async def _stdio_tools() -> list[dict[str, Any]]:
    server = build_server(RemoteBackend(AsyncNeuralMemoryClient("http://127.0.0.1:9", WRONG_KEY)))
    async with Client(server) as agent:
        return [
            tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in (await agent.list_tools()).tools
        ]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_official_client_lists_the_seven_tools_and_calls_each_over_the_local_server(
    api: RunningApi, mode: str
) -> None:
    # Given the local server's /mcp and a workspace's key (auto: the client first probes the 2026
    # revision's server/discover, then falls back to the handshake)
    key = api.key_for(f"agents-{mode}")
    # When an agent connects with the key in its Authorization header and calls every tool
    replies = anyio.run(_every_tool, f"{api.url}/mcp", key, mode)
    # Then it lists the seven tools, exactly as the stdio server lists them (one definition)
    assert {tool["name"] for tool in replies["tools"]} == TOOLS
    assert replies["tools"] == anyio.run(_stdio_tools)
    assert replies["instructions"] == INSTRUCTIONS and replies["server"].name == "neural-memory"
    assert replies["version"] == "2025-11-25"
    # And each call is served, as the compact text the model reads
    assert replies["remember"] == (False, "Remembered 3 (3 new, 0 updated): pin-sdk, refund-bug, deploy-day")
    found = replies["search_memory"]
    assert not found[0] and "1. [pin-sdk] We pin the payments SDK at 4.2 (agent/decision, ana, 2025-12-10" in found[1]
    assert not replies["answer_question"][0] and "[pin-sdk]" in replies["answer_question"][1]
    assert replies["get_memory"][1].startswith("[pin-sdk] We pin the payments SDK at 4.2\nagent/decision by ana")
    assert not replies["who_knows"][0] and "1. ana " in replies["who_knows"][1], replies["who_knows"]
    traced = replies["trace_decision"]
    assert not traced[0] and "[refund-bug]" in traced[1] and "commit 9f2c4e1" in traced[1], traced
    assert replies["forget"] == (False, "Forgot deploy-day.")
    assert replies["forgotten"] == (True, "not_found: observation 'deploy-day' not found")


async def _same_calls(agent: Client) -> dict[str, Any]:
    """Read-only calls and refusals, each one's (is_error, text); an unknown tool's protocol error."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search_memory", {"query": "payments SDK version", "topK": 3, "mode": mode})
        for mode in ("hybrid", "keyword", "semantic")
    ]
    calls += [
        ("search_memory", {"query": "refunds", "filters": {"observationTypes": ["bug"]}}),
        ("answer_question", {"question": "Why do partial refunds fail?"}),
        ("get_memory", {"id": "pin-sdk"}),
        ("who_knows", {"query": "payments SDK"}),
        ("trace_decision", {"id": "refund-bug"}),
        ("get_memory", {"id": "no-such-memory"}),
        ("forget", {"id": "no-such-memory"}),
        ("search_memory", {"query": "x", "topK": 1000}),
        ("search_memory", {"query": "x", "rerank": "best"}),
        ("remember", {"observations": [{"content": "x", "url": "not a url"}]}),
        ("get_memory", {}),
    ]
    replies: dict[str, Any] = {json.dumps(c): _reply(await agent.call_tool(*c)) for c in calls}
    with pytest.raises(MCPError) as unknown:
        await agent.call_tool("rm_rf", {})
    replies["unknown tool"] = (unknown.value.code, unknown.value.message)
    return replies


def test_the_http_endpoint_gives_the_stdio_server_s_replies(api: RunningApi) -> None:
    # Given a workspace holding the notes, the stdio server an agent starts on the same API and key
    key = api.key_for("same-replies")
    stdio: StdioServerParameters = stdio_server(["mcp", "--url", api.url, "--key", key])

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        async with _client(f"{api.url}/mcp", key) as agent:
            assert not (await agent.call_tool("remember", {"observations": NOTES})).is_error
            over_http = await _same_calls(agent)
        async with Client(stdio) as agent:
            over_stdio = await _same_calls(agent)
        return over_http, over_stdio

    # When the same calls are made through each
    over_http, over_stdio = anyio.run(both)
    # Then every reply is the same text: results, answers, lineage, experts, and every refusal
    assert over_http == over_stdio
    assert over_http['["get_memory", {"id": "no-such-memory"}]'] == (
        True,
        "not_found: observation 'no-such-memory' not found",
    )
    assert over_http["unknown tool"] == (-32602, "Unknown tool: rm_rf")


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": f"Bearer {WRONG_KEY}"}, {"Authorization": WRONG_KEY}, {"Authorization": "Basic dXNlcg=="}],
    ids=["missing", "wrong", "no bearer", "basic"],
)
def test_a_missing_or_wrong_key_is_a_401_with_the_rest_routes_message(api: RunningApi, headers: dict[str, str]) -> None:
    # When an MCP message comes with no key or a wrong one, and the same headers to a REST route
    mcp = httpx.post(f"{api.url}/mcp", json=PING, headers=headers)
    rest = httpx.post(f"{api.url}/v1/search", json={"query": "x"}, headers=headers)
    # Then both are the same 401, in the envelope, saying what is wrong with the key
    assert mcp.status_code == rest.status_code == 401
    assert mcp.json()["error"] == rest.json()["error"]
    assert mcp.json()["error"]["message"] == key_problem(headers)


def test_the_official_client_with_a_wrong_key_fails_to_connect(api: RunningApi) -> None:
    async def connect() -> None:
        async with _client(f"{api.url}/mcp", WRONG_KEY, "legacy"):
            pass

    # The 401 refuses the handshake (the SDK raises it from its task group)
    with pytest.raises(BaseExceptionGroup) as refused:
        anyio.run(connect)
    assert refused.group_contains(MCPError, match="error response")


def test_a_key_of_workspace_b_never_sees_workspace_a(api: RunningApi) -> None:
    # Given workspace A's notes remembered with A's key
    a, b = api.key_for("team-a"), api.key_for("team-b")

    async def sessions() -> tuple[dict[str, Any], dict[str, Any]]:
        async with _client(f"{api.url}/mcp", a) as agent:
            assert not (await agent.call_tool("remember", {"observations": NOTES})).is_error
        async with _client(f"{api.url}/mcp", b) as agent:
            seen = {
                "search": _reply(await agent.call_tool("search_memory", {"query": "payments SDK version pinned"})),
                "keyword": _reply(await agent.call_tool("search_memory", {"query": "payments SDK", "mode": "keyword"})),
                "answer": _reply(await agent.call_tool("answer_question", {"question": "Why is the SDK pinned?"})),
                "who": _reply(await agent.call_tool("who_knows", {"query": "payments SDK refunds"})),
                "get": _reply(await agent.call_tool("get_memory", {"id": "pin-sdk"})),
                "trace": _reply(await agent.call_tool("trace_decision", {"id": "pin-sdk"})),
                "forget": _reply(await agent.call_tool("forget", {"id": "pin-sdk"})),
            }
        async with _client(f"{api.url}/mcp", a) as agent:
            still = _reply(await agent.call_tool("get_memory", {"id": "pin-sdk"}))
        return seen, {"still": still}

    # When B's key searches, asks, reads, traces and forgets A's memories
    seen, after = anyio.run(sessions)
    # Then B sees nothing of A and forgets nothing of A's
    assert seen["search"] == (False, "No memories match 'payments SDK version pinned'.")
    assert seen["keyword"] == (False, "No memories match 'payments SDK'.")
    assert "[pin-sdk]" not in seen["answer"][1] and "(no source in memory supports an answer)" in seen["answer"][1]
    assert seen["who"] == (False, "Nobody's memories match 'payments SDK refunds'.")
    missing = (True, "not_found: observation 'pin-sdk' not found")
    assert seen["get"] == seen["trace"] == seen["forget"] == missing
    assert not after["still"][0] and after["still"][1].startswith("[pin-sdk]")


def _hostile() -> list[tuple[str, str, bytes, dict[str, str]]]:
    """(what, method, body, extra headers) for input no client should send."""
    message = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
    return [
        ("not JSON", "POST", b"{this is not json", {}),
        ("empty body", "POST", b"", {}),
        ("a JSON string", "POST", b'"ping"', {}),
        ("a batch of requests", "POST", json.dumps([PING, message]).encode(), {}),
        ("an empty batch", "POST", b"[]", {}),
        ("a batch of a notification", "POST", b'[{"jsonrpc": "2.0", "method": "notifications/initialized"}]', {}),
        ("no jsonrpc field", "POST", b'{"id": 1, "method": "ping"}', {}),
        ("JSON-RPC 1.0", "POST", b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', {}),
        ("an unknown method", "POST", b'{"jsonrpc": "2.0", "id": 1, "method": "resources/list"}', {}),
        ("a method that is no string", "POST", b'{"jsonrpc": "2.0", "id": 1, "method": 42}', {}),
        ("a null id", "POST", b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', {}),
        ("a boolean id", "POST", b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', {}),
        ("an object id", "POST", b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', {}),
        ("params as an array", "POST", b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}', {}),
        ("initialize without a version", "POST", b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"}', {}),
        ("a call with no name", "POST", b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}', {}),
        ("arguments as a string", "POST",
         b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "forget", "arguments": "x"}}', {}),
        ("an unknown tool", "POST",
         b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "drop_tables"}}', {}),
        ("arguments the tool refuses", "POST", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "remember", "arguments": {"observations": [{"content": ""}] * 101}}}).encode(), {}),
        ("a lone surrogate", "POST", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "\\ud800"}}', {}),
        ("bytes that are not UTF-8", "POST", b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}', {}),
        ("nesting too deep", "POST", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + b"[" * 100
         + b"]" * 100 + b"}", {}),
        ("an integer of 5000 digits", "POST", b'{"jsonrpc": "2.0", "id": ' + b"1" * 5000 + b', "method": "ping"}', {}),
        ("a body over the limit", "POST", json.dumps({**PING, "params": {"pad": "x" * 2_000_000}}).encode(), {}),
        ("an unsupported protocol version", "POST", json.dumps(PING).encode(), {"MCP-Protocol-Version": "1999-01-01"}),
        ("an Accept without JSON", "POST", json.dumps(PING).encode(), {"Accept": "text/html"}),
        ("a text/plain body", "POST", json.dumps(PING).encode(), {"Content-Type": "text/plain"}),
        ("a GET for the session stream", "GET", b"", {"Accept": "text/event-stream"}),
        ("a DELETE of a session", "DELETE", b"", {"Mcp-Session-Id": "made-up"}),
        ("a HEAD", "HEAD", b"", {}),
        ("a PUT", "PUT", json.dumps(PING).encode(), {}),
    ]  # fmt: skip


def test_hostile_input_on_mcp_is_a_json_rpc_error_or_a_4xx_never_a_5xx(api: RunningApi) -> None:
    key = api.key_for("hostile")
    base = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json"}
    answered = {}
    for what, method, body, extra in _hostile():
        # When the request reaches /mcp with a valid key
        reply = httpx.request(method, f"{api.url}/mcp", content=body, headers={**base, **extra}, timeout=60)
        # Then it is a 4xx or a JSON-RPC error, never a 5xx, and never a session
        assert reply.status_code < 500, (what, reply.status_code, reply.text[:300])
        assert "mcp-session-id" not in reply.headers, what
        document = reply.json() if reply.content else None
        if document is None:  # a HEAD's reply has no body
            assert method == "HEAD" and reply.status_code == 405, what
        elif reply.status_code >= 400:  # a JSON-RPC error, or the API's envelope (a body refused before /mcp)
            assert ("jsonrpc" in document and "error" in document) or "code" in document.get("error", {}), what
        else:  # a JSON-RPC reply: an error, or a tool's result telling the model what was wrong
            assert document["jsonrpc"] == "2.0" and ("error" in document or "result" in document), what
        answered[what] = (reply.status_code, (document or {}).get("error", {}).get("code"))
    # And each is told what it is
    assert answered["not JSON"] == answered["empty body"] == (400, -32700)
    assert answered["a batch of requests"] == answered["an empty batch"] == (400, -32600)
    assert answered["a batch of a notification"] == (400, -32600)
    assert answered["an unknown method"] == (200, -32601)
    assert answered["a null id"] == answered["a boolean id"] == answered["an object id"] == (400, -32600)
    assert answered["params as an array"] == answered["initialize without a version"] == (200, -32602)
    assert answered["an unknown tool"] == answered["a call with no name"] == (200, -32602)
    assert answered["a body over the limit"] == (413, "payload_too_large")
    assert answered["an unsupported protocol version"] == (400, -32600)
    assert answered["an Accept without JSON"] == (406, -32600)
    assert answered["a GET for the session stream"] == answered["a DELETE of a session"] == (405, -32600)
    assert answered["a PUT"] == (405, "method_not_allowed")
    # And the server still answers the next message
    after = httpx.post(f"{api.url}/mcp", json=PING, headers=base)
    assert after.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_the_endpoint_is_stateless_and_speaks_the_handshake_s_protocol_versions(api: RunningApi) -> None:
    key = api.key_for("stateless")
    headers = {"Authorization": f"Bearer {key}"}
    # The versions it speaks are the SDK's handshake revisions
    assert PROTOCOL_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    # A client's version is echoed when spoken, else the newest is offered; no session is issued
    for asked, given in [("2025-03-26", "2025-03-26"), ("2025-06-18", "2025-06-18"), ("2099-01-01", "2025-11-25")]:
        hello = {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        reply = httpx.post(f"{api.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
                           headers=headers)  # fmt: skip
        assert reply.status_code == 200 and reply.headers["content-type"].startswith("application/json")
        result = reply.json()["result"]
        assert result["protocolVersion"] == given and result["capabilities"] == {"tools": {"listChanged": False}}
        assert "mcp-session-id" not in reply.headers
    # A call needs no handshake before it (any instance answers any request), and a notification is accepted
    listed = httpx.post(f"{api.url}/mcp", json={"jsonrpc": "2.0", "id": "a", "method": "tools/list"}, headers=headers)
    assert [tool["name"] for tool in listed.json()["result"]["tools"]] == [
        "search_memory", "answer_question", "remember", "get_memory", "forget", "who_knows", "trace_decision"
    ]  # fmt: skip
    noted = httpx.post(
        f"{api.url}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert (noted.status_code, noted.content) == (202, b"")


def test_agents_install_gives_claude_code_the_http_entry_when_the_api_serves_mcp(
    api: RunningApi, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import http.server
    import threading

    from neural_memory.local.cli import main

    def entry(project: Path) -> dict[str, Any]:
        server: dict[str, Any] = json.loads((project / ".mcp.json").read_text())["mcpServers"]["neural-memory"]
        return server

    # Given the local server (it serves /mcp), and an older API that does not (every path a 404)
    class Older(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    older = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Older)
    threading.Thread(target=older.serve_forever, daemon=True).start()
    projects = {name: tmp_path / name for name in ("auto", "wrong-key", "process", "older")}
    for project in projects.values():
        project.mkdir()
    try:
        install = ["agents", "install", "claude-code", "--url"]
        # When the memory is installed for each
        assert main([*install, api.url, "--key", api.key, "--project", str(projects["auto"])]) == 0
        assert main([*install, api.url, "--key", WRONG_KEY, "--project", str(projects["wrong-key"])]) == 0
        assert (
            main([*install, api.url, "--key", api.key, "--mcp", "process", "--project", str(projects["process"])]) == 0
        )
        older_url = f"http://127.0.0.1:{older.server_address[1]}"
        assert main([*install, older_url, "--key", api.key, "--project", str(projects["older"])]) == 0
    finally:
        older.shutdown()
        older.server_close()
    capsys.readouterr()
    # Then Claude Code reaches the local server's /mcp (even when the key given is wrong: the route
    # is there, behind the key), a local process when asked, and for the older API
    http_entry = {"type": "http", "url": f"{api.url}/mcp", "headers": {"Authorization": "Bearer ${NM_API_KEY}"}}
    assert entry(projects["auto"]) == entry(projects["wrong-key"]) == http_entry
    assert entry(projects["process"])["args"] == ["mcp", "--url", api.url]
    assert entry(projects["older"])["args"] == ["mcp", "--url", older_url]
    # And agents status checks the MCP endpoint with the key
    assert main(["agents", "status", "claude-code", "--project", str(projects["auto"])]) == 0
    assert f"  MCP: answers at {api.url}/mcp (protocol 2025-06-18)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("containing", "variable"),
    [('"type": "http"', "${NM_API_KEY}"), ("${env:NM_API_KEY}", "${env:NM_API_KEY}")],
    ids=["claude-code", "cursor"],
)
def test_the_readme_s_http_configurations_reach_the_tools_with_the_key(
    api: RunningApi, containing: str, variable: str
) -> None:
    # Given the README's configuration, verbatim, its URL pointed at this server and its variable
    # filled in from the environment as the agent fills it in
    config = json.loads(readme_block("json", containing))["mcpServers"]["neural-memory"]
    key = api.key_for("readme")
    url = config["url"].replace("http://127.0.0.1:8080", api.url)
    headers = {name: value.replace(variable, key) for name, value in config["headers"].items()}

    async def listed() -> set[str]:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as agent,
        ):
            return {tool.name for tool in (await agent.list_tools()).tools}

    # When the official client connects with it, Then it lists the tools
    assert anyio.run(listed) == TOOLS
