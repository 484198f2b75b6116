"""The engineering tools of ``neural-memory mcp`` (``trace_decision``, ``who_knows``), driven by the ``mcp`` SDK's
own client over stdio: on the embedded store in-process and on a remote API through the client,
the same replies for the same data, and a refused call as a tool error."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import pytest
from mcp import Client
from neural_memory.models import ExpertsResponse, LineageResponse

from tests.helpers.local_api import RunningApi, running_local_api
from tests.helpers.mcp_sessions import stdio_server, structured, text_of

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from mcp.client.stdio import StdioServerParameters
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration

SHA = "7f3a9b2c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f70"
MEMORIES = [
    {"id": "adr-1", "observationType": "decision", "occurredAt": "2025-12-01T09:00:00Z", "actorName": "alice",
     "content": "We refresh sessions in page components."},
    {"id": "adr-2", "observationType": "decision", "occurredAt": "2025-12-05T09:00:00Z", "actorName": "bob",
     "content": "We refresh sessions once per request in the edge middleware.", "supersedes": ["adr-1"],
     "metadata": {"repo": "acme/console", "number": 482}},
    {"id": "deploy-note", "observationType": "note", "occurredAt": "2025-12-06T09:00:00Z", "actorName": "carol",
     "content": "The deploy of the edge middleware failed on a missing env var.", "metadata": {"commitSha": SHA}},
    {"id": "pr-482", "observationType": "pull_request_merged", "occurredAt": "2025-12-05T12:00:00Z",
     "actorName": "bob", "content": "Move session refresh into the edge middleware.", "tier": "A",
     "metadata": {"repo": "acme/console", "number": 482, "commitSha": SHA}},
]  # fmt: skip


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxLocalEmbedder) -> Iterator[RunningApi]:
    with running_local_api(tmp_path_factory.mktemp("mcp-engineering"), embedder, None) as running:
        yield running


async def _traced(server: StdioServerParameters) -> dict[str, Any]:
    async with Client(server) as agent:
        tools = {tool.name: tool for tool in (await agent.list_tools()).tools}
        assert tools["trace_decision"].output_schema and tools["trace_decision"].annotations
        assert tools["trace_decision"].annotations.read_only_hint
        assert tools["who_knows"].output_schema and tools["who_knows"].description
        structured(await agent.call_tool("remember", {"observations": MEMORIES}))
        traced = await agent.call_tool("trace_decision", {"id": "adr-2"})
        missing = await agent.call_tool("trace_decision", {"id": "adr-9"})
        data = {key: value for key, value in structured(traced).items() if key != "requestId"}
        known = await agent.call_tool("who_knows", {"query": "session refresh in the edge middleware", "topK": 2})
        bad = await agent.call_tool("who_knows", {"query": "session refresh", "filters": {"tiers": ["Z"]}})
        experts = {key: value for key, value in structured(known).items() if key not in {"requestId", "latency"}}
        return {
            "reply": data,
            "text": text_of(traced),
            "missing": (missing.is_error, text_of(missing)),
            "experts": experts,
            "experts text": text_of(known),
            "bad": (bad.is_error, "tiers" in text_of(bad)),
        }


def test_trace_decision_gives_the_chain_and_the_shared_keys_on_both_backends(api: RunningApi, tmp_path: Path) -> None:
    # Given the same memories through the embedded store and through the API
    embedded = anyio.run(
        _traced, stdio_server(["mcp", "--data-dir", str(tmp_path / "e"), "--workspace", "team", "--structured-content"])
    )
    remote = anyio.run(
        _traced, stdio_server(["mcp", "--url", api.url, "--key", api.key_for("team"), "--structured-content"])
    )
    # Then the decision's lineage holds the version it replaced, the PR of the same number (and
    # not the note, which shares a commit with the PR only), oldest first, in both
    reply = LineageResponse.model_validate({**embedded["reply"], "requestId": "x"})
    assert [(e.id, [(link.kind, link.key) for link in e.links]) for e in reply.timeline] == [
        ("adr-1", [("supersededBy", "adr-2")]),
        ("adr-2", []),
        ("pr-482", [("pullRequest", "acme/console#482")]),
    ]
    assert "<- supersededBy adr-2" in embedded["text"]
    assert "<- pullRequest acme/console#482" in embedded["text"] and "<- this one" in embedded["text"]
    assert embedded["missing"][0] and "not_found: observation 'adr-9' not found" in embedded["missing"][1]
    assert [embedded[k] for k in ("reply", "text", "missing")] == [remote[k] for k in ("reply", "text", "missing")]


def test_who_knows_ranks_the_people_on_both_backends(api: RunningApi, tmp_path: Path) -> None:
    embedded = anyio.run(
        _traced, stdio_server(["mcp", "--data-dir", str(tmp_path / "e"), "--workspace", "team", "--structured-content"])
    )
    remote = anyio.run(
        _traced, stdio_server(["mcp", "--url", api.url, "--key", api.key_for("team"), "--structured-content"])
    )
    # bob decided the current way and merged it; alice's decision was superseded (out of search)
    zero = dict.fromkeys(("total", "embed", "retrieval", "llmFilter", "rerank"), 0)
    reply = ExpertsResponse.model_validate({**embedded["experts"], "requestId": "x", "latency": zero})
    assert [e.actor_name for e in reply.experts][0] == "bob" and "alice" not in [e.actor_name for e in reply.experts]
    assert reply.experts[0].counts == {"decision": 1, "pull_request_merged": 1}
    assert "1. bob (score 1.00;" in embedded["experts text"] and "[adr-2]" in embedded["experts text"]
    assert embedded["bad"] == (True, True)
    # The same people, work and evidence (the scores' recency reads each server's own clock)
    assert _ranked(embedded["experts"]) == _ranked(remote["experts"])


def _ranked(reply: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(e["actorName"], e["counts"], [x["id"] for x in e["evidence"]]) for e in reply["experts"]]
