"""``api/mcp_endpoint.serve_post`` on its own: what needs the caller's memory and what does not, and
a memory that cannot be built or that fails is the call's tool error, never the transport's."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.api.mcp_endpoint import serve_post
from neural_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from neural_memory.agent_tools.calling import Memory

NOW = datetime(2025, 12, 12, 10, 0, tzinfo=UTC)
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}


def _post(message: Any, memory: Any) -> tuple[int, Any]:
    reply = serve_post(json.dumps(message), {"Accept": "application/json, text/event-stream"}, memory, NOW)
    return reply.status, json.loads(reply.body) if reply.body else None


def test_the_handshake_the_listing_and_notifications_never_build_the_memory() -> None:
    built: list[str] = []

    def memory() -> Memory:
        built.append("built")
        raise AssertionError("no store is needed to say hello or list the tools")

    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        {"jsonrpc": "2.0", "id": 9, "result": {}},  # a response to a request this server never sends
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "no_such_tool"}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "search_memory", "arguments": {}}},
    ):
        status, _ = _post(message, memory)
        assert status in {200, 202}, message
    assert built == []


@pytest.mark.parametrize(
    ("failure", "text"),
    [
        (ConfigurationError("invalid configuration: NM_STORE: bad"), "configuration_error: invalid configuration"),
        (RuntimeError("a bug"), "internal_error: search_memory failed unexpectedly"),
    ],
)
def test_a_memory_that_cannot_be_built_is_the_call_s_tool_error(failure: Exception, text: str) -> None:
    def memory() -> Memory:
        raise failure

    call = {"name": "search_memory", "arguments": {"query": "deploys"}}
    status, reply = _post({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call}, memory)
    assert status == 200 and reply["id"] == 7
    assert reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["text"].startswith(text), reply
    assert "a bug" not in json.dumps(reply)  # a crash's own words stay in the log
