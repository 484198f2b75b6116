"""``neural-memory mcp`` driven by the ``mcp`` SDK's own client, as agents run it: a subprocess over
stdio (started from the README's configuration, verbatim) and over streamable HTTP; the embedded
store in-process and a remote API through the client, giving the same results for the same data."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from mcp import Client
from neural_memory.local.cli import main
from neural_memory.local.mcp_server.backends import EmbeddedBackend
from neural_memory.local.mcp_server.tools import build_server
from neural_memory.models import (
    AnswerResponse,
    DeleteResponse,
    ObservationOut,
    ObservationsResponse,
    SearchResponse,
)
from neural_memory.stores.base import read_one

from tests.helpers.events import NOW
from tests.helpers.local_api import RunningApi, running_local_api
from tests.helpers.mcp_sessions import TOOLS, http_server, stdio_server, structured, text_of
from tests.helpers.readme import readme_block
from tests.helpers.stored_chunks import stored_chunks

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from mcp.client.stdio import StdioServerParameters
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
    from neural_memory.service import Service

pytestmark = pytest.mark.integration

UNKNOWN_KEY = "nm_000000000000_" + "A" * 43


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxLocalEmbedder) -> Iterator[RunningApi]:
    """The real local API on a fresh store, for the remote backend. No samples: the embedded store
    compared with it must hold the same data, and lexical scores read the whole store's statistics."""
    with running_local_api(tmp_path_factory.mktemp("mcp-api"), embedder, None) as running:
        yield running


def test_an_agent_configured_as_the_readme_says_remembers_searches_answers_and_forgets(tmp_path: Path) -> None:
    # Given the README's MCP configuration, verbatim, started in a project folder as an agent starts it
    config = json.loads(readme_block("json", "mcpServers"))["mcpServers"]["neural-memory"]
    # (with the API's replies as structured content, to check every field of them)
    server = stdio_server([*config["args"], "--structured-content"], cwd=tmp_path, command=config["command"])

    async def session() -> None:
        async with Client(server) as agent:
            # When the agent lists the tools, Then it sees them all, each described and with an output schema
            tools = {tool.name: tool for tool in (await agent.list_tools()).tools}
            assert set(tools) == TOOLS
            assert all(tool.description and tool.output_schema for tool in tools.values())
            assert tools["search_memory"].annotations and tools["search_memory"].annotations.read_only_hint
            assert tools["forget"].annotations and tools["forget"].annotations.destructive_hint
            # (the listing teaches a memory's content, title, type and supersedes; every other field is accepted)
            note_schema = tools["remember"].input_schema["properties"]["observations"]["items"]
            assert note_schema["required"] == ["content"]
            assert {"title", "observationType", "supersedes"} <= set(note_schema["properties"])

            # When it remembers a decision (with an id and title) and a bare note (content only)
            before = datetime.now(UTC)
            remembered = await agent.call_tool("remember", {"observations": [
                {"id": "decision-blue-green", "title": "We deploy with blue-green switches", "observationType":
                 "decision", "content": "Traffic moves to the new stack only after health checks pass."},
                {"content": "The staging database is reset every Monday at 06:00 UTC by a cron job."},
            ]})  # fmt: skip
            reply = ObservationsResponse.model_validate(structured(remembered))
            assert reply.ids[0] == "decision-blue-green" and (reply.created, reply.updated) == (2, 0)
            assert "Remembered 2 (2 new, 0 updated)" in text_of(remembered)
            bare = reply.ids[1]
            # Then the bare note got the defaults: its first words as title, note by agent, now
            stored = ObservationOut.model_validate(structured(await agent.call_tool("get_memory", {"id": bare})))
            assert stored.title.startswith("The staging database is reset every Monday")
            assert (stored.observation_type, stored.source, stored.tier) == ("note", "agent", "A")
            assert before <= stored.occurred_at <= datetime.now(UTC)

            # When it searches, Then the best memory comes first, in the text and the structured content
            found = await agent.call_tool("search_memory", {"query": "how do we deploy safely", "topK": 5})
            results = SearchResponse.model_validate(structured(found)).results
            assert results[0].id == "decision-blue-green"
            assert "1. [decision-blue-green] We deploy with blue-green switches (agent/decision" in text_of(found)
            # And a provider this deployment never configured is in the reply, not in the model's text
            assert (
                "rerank:balanced->fast (Cohere not configured)"
                in SearchResponse.model_validate(structured(found)).degraded
            )
            assert "degraded" not in text_of(found)
            # And filters narrow it (the API's names)
            only_notes = await agent.call_tool(
                "search_memory", {"query": "database reset", "filters": {"observationTypes": ["note"]}}
            )
            assert [r.id for r in SearchResponse.model_validate(structured(only_notes)).results] == [bare]

            # When it asks a question, Then the answer cites the memory it rests on
            answered = await agent.call_tool("answer_question", {"question": "When is the staging database reset?"})
            answer = AnswerResponse.model_validate(structured(answered))
            assert bare in [c.id for c in answer.citations] and f"[{bare}]" in text_of(answered)

            # When an argument is bad, Then it is a tool error naming it, and the server answers the next call
            bad = await agent.call_tool("search_memory", {"query": "deploy", "topK": 1000})
            assert bad.is_error and "topK" in text_of(bad)
            # And a rerank the server cannot run (no model pulled) falls back to fast, and says so
            local = await agent.call_tool("search_memory", {"query": "how do we deploy safely", "rerank": "local"})
            reranked = SearchResponse.model_validate(structured(local))
            assert reranked.rerank.mode == "local" and reranked.results[0].id == "decision-blue-green"
            assert any("models pull" in reason for reason in reranked.degraded)
            assert "(degraded: rerank:local->fast (" in text_of(local)  # what fell back this time is told
            unknown = await agent.call_tool("search_memory", {"query": "deploy", "rerank": "best"})
            assert unknown.is_error and "validation_error: rerank" in text_of(unknown)
            bad_note = await agent.call_tool("remember", {"observations": [{"content": "x", "url": "not a url"}]})
            assert bad_note.is_error and "validation_error: observations.0.url" in text_of(bad_note)
            missing = await agent.call_tool("get_memory", {"id": "no-such-memory"})
            assert missing.is_error and "not_found: observation 'no-such-memory' not found" in text_of(missing)

            # When it forgets the decision, Then it is gone
            forgotten = await agent.call_tool("forget", {"id": "decision-blue-green"})
            assert DeleteResponse.model_validate(structured(forgotten)).deleted
            assert "Forgot decision-blue-green." in text_of(forgotten)
            again = await agent.call_tool("search_memory", {"query": "how do we deploy safely"})
            assert "decision-blue-green" not in [r.id for r in SearchResponse.model_validate(structured(again)).results]

    anyio.run(session)
    # And the memory lives in the folder the configuration names, relative to where the agent started it
    assert (tmp_path / ".neural-memory" / "neural-memory.sqlite3").exists()


async def _remote_session_over_http(url: str) -> None:
    async with Client(url) as agent:
        assert {tool.name for tool in (await agent.list_tools()).tools} == TOOLS
        # When it remembers, searches, reads, answers and forgets, Then each goes through the API
        note = {"id": "http-note", "content": "The on-call rotation changes every Tuesday at noon."}
        stored = await agent.call_tool("remember", {"observations": [note]})
        assert ObservationsResponse.model_validate(structured(stored)).ids == ["http-note"]
        found = await agent.call_tool("search_memory", {"query": "when does the on-call rotation change"})
        assert [r.id for r in SearchResponse.model_validate(structured(found)).results] == ["http-note"]
        read = ObservationOut.model_validate(structured(await agent.call_tool("get_memory", {"id": "http-note"})))
        assert read.content == note["content"]
        answered = await agent.call_tool("answer_question", {"question": "When does the on-call rotation change?"})
        assert "http-note" in [c.id for c in AnswerResponse.model_validate(structured(answered)).citations]
        # When the API refuses a call, Then the tool error carries the envelope's code and message
        undated = {"content": "x", "occurredAt": "yesterday"}
        refused = await agent.call_tool("remember", {"observations": [undated]})
        assert refused.is_error and "validation_error: observations.0.occurredAt" in text_of(refused)
        # And the server answers the next call
        gone = await agent.call_tool("forget", {"id": "http-note"})
        assert DeleteResponse.model_validate(structured(gone)).deleted
        missing = await agent.call_tool("forget", {"id": "http-note"})
        assert missing.is_error and "not_found: observation 'http-note' not found" in text_of(missing)


def test_by_default_the_model_gets_the_compact_text_and_no_structured_content(tmp_path: Path) -> None:
    # Given the README's configuration, verbatim (Claude Code sends the model a tool's structured
    # content instead of its text when there is one: the API's whole JSON)
    config = json.loads(readme_block("json", "mcpServers"))["mcpServers"]["neural-memory"]
    server = stdio_server(config["args"], cwd=tmp_path, command=config["command"])

    async def session() -> tuple[list[Any], Any, Any]:
        async with Client(server) as agent:
            tools = (await agent.list_tools()).tools
            await agent.call_tool(
                "remember", {"observations": [{"id": "n-1", "content": "Deploys go out on Tuesdays."}]}
            )
            return tools, await agent.call_tool("search_memory", {"query": "when do deploys go out"}), None

    tools, found, _ = anyio.run(session)
    # Then no tool declares an output schema, and a search result is the summary alone
    assert [tool.name for tool in tools if tool.output_schema] == []
    assert found.structured_content is None and not found.is_error
    assert text_of(found).startswith("1 memories for 'when do deploys go out', best first:\n1. [n-1] ")


def test_streamable_http_serves_a_remote_api_and_survives_its_errors(api: RunningApi, tmp_path: Path) -> None:
    # Given `neural-memory mcp --http` in front of the running API, with the demo workspace's key
    with http_server(["--url", api.url, "--key", api.key, "--structured-content"], cwd=tmp_path) as url:
        # When an agent works through it (see the session)
        anyio.run(_remote_session_over_http, url)
    # Then the note reached the API's store, and left it
    assert read_one(api.service.store, "demo", "http-note") is None


def test_an_unusable_key_is_a_tool_error_not_a_crash(api: RunningApi) -> None:
    async def session() -> tuple[bool, str, bool]:
        async with Client(stdio_server(["mcp", "--url", api.url, "--key", UNKNOWN_KEY])) as agent:
            denied = await agent.call_tool("search_memory", {"query": "deploy"})
            tools = await agent.list_tools()  # still serving
            return denied.is_error, text_of(denied), len(tools.tools) == len(TOOLS)

    is_error, text, still_serving = anyio.run(session)
    assert is_error and "unauthorized:" in text and still_serving


MEMORIES = [
    {"id": f"same-{n}", "observationType": kind, "occurredAt": f"2025-12-{10 + n:02}T09:00:00Z", "content": content}
    for n, (kind, content) in enumerate([
        ("decision", "We deploy the API with blue-green switches; traffic moves after health checks pass."),
        ("note", "The staging database is reset every Monday at 06:00 UTC by a cron job."),
        ("decision", "Feature flags older than ninety days are deleted in the Friday cleanup."),
        ("note", "Rollbacks use Vercel's instant rollback; never redeploy an old commit by hand."),
        ("note", "The on-call engineer owns the deploy freeze during incident reviews."),
        ("design_note", "Search results are cached for thirty seconds at the edge."),
    ])
]  # fmt: skip
QUERIES = ["how do we deploy", "database reset schedule", "feature flag cleanup", "rollback a bad release"]


async def _replies(server: StdioServerParameters) -> dict[str, Any]:
    """Remember MEMORIES, then what each tool returns, without what differs per call (request ids, latency)."""

    def comparable(result: Any, *volatile: str) -> Any:
        data = structured(result)
        return {key: value for key, value in data.items() if key not in {"requestId", "latency", *volatile}}

    async with Client(server) as agent:
        added = await agent.call_tool("remember", {"observations": MEMORIES})
        replies: dict[str, Any] = {"remember": comparable(added)}
        for query in QUERIES:
            for mode in ("hybrid", "keyword", "semantic"):
                found = await agent.call_tool("search_memory", {"query": query, "mode": mode, "topK": 4})
                replies[f"search {mode} {query}"] = (comparable(found), text_of(found))
            answered = await agent.call_tool("answer_question", {"question": query + "?"})
            replies[f"answer {query}"] = (comparable(answered), text_of(answered))
        read = await agent.call_tool("get_memory", {"id": "same-3"})
        replies["get"] = comparable(read, "ingestedAt")
        missing = await agent.call_tool("get_memory", {"id": "same-9"})
        replies["get missing"] = text_of(missing)
        replies["forget"] = comparable(await agent.call_tool("forget", {"id": "same-5"}))
        after = await agent.call_tool("search_memory", {"query": "cached at the edge", "topK": 3})
        replies["after forget"] = comparable(after)
    return replies


def test_both_backends_give_the_same_results_for_the_same_data(api: RunningApi, tmp_path: Path) -> None:
    # Given the same memories remembered in the embedded store and through the API, each in an empty workspace
    embedded = stdio_server(
        ["mcp", "--data-dir", str(tmp_path / "embedded"), "--workspace", "team", "--structured-content"]
    )
    remote = stdio_server(["mcp", "--url", api.url, "--key", api.key_for("team"), "--structured-content"])
    # When the same calls are made through each
    in_process, through_api = anyio.run(_replies, embedded), anyio.run(_replies, remote)
    # Then every reply is the same: results, scores, snippets, answers, citations, errors
    assert in_process["remember"] == {"ids": [m["id"] for m in MEMORIES], "created": 6, "updated": 0, "redacted": 0}
    assert "same-0" in [r["id"] for r in in_process["search hybrid how do we deploy"][0]["results"]]
    assert in_process == through_api


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["mcp"], "--workspace is needed"),
        (["mcp", "--workspace", "acme", "--url", "http://127.0.0.1:9"], "--workspace: a remote API's key names"),
        (["mcp", "--url", "127.0.0.1:8080", "--key", "k"], "base_url must be an http(s) URL"),
    ],
)
def test_a_backend_that_cannot_be_chosen_is_refused_before_serving(
    args: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    assert complaint in capsys.readouterr().err


def test_sigterm_with_stdin_still_open_closes_the_store_and_ends_the_server(tmp_path: Path) -> None:
    import signal
    import subprocess

    from tests.helpers.mcp_sessions import BIN, agent_environment

    # Given the stdio server answering an agent that keeps its stdin open
    command = [str(BIN / "neural-memory"), "mcp", "--data-dir", str(tmp_path / "data"), "--workspace", "demo"]
    process = subprocess.Popen(
        command, env=agent_environment(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}
    process.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode() + b"\n"
    )
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    # When its supervisor sends SIGTERM (stdin still open), Then it ends by itself, promptly and cleanly
    process.send_signal(signal.SIGTERM)
    try:
        assert process.wait(timeout=20) == 0
    finally:
        process.kill()
        process.communicate()


def test_a_malformed_line_on_stdio_gets_a_json_rpc_error_and_the_server_keeps_answering(tmp_path: Path) -> None:
    import select
    import subprocess
    import time

    from tests.helpers.mcp_sessions import BIN, agent_environment

    # Given the stdio server (a remote backend: no call here reaches it, so no model is loaded)
    command = [str(BIN / "neural-memory"), "mcp", "--url", "http://127.0.0.1:9", "--key", UNKNOWN_KEY]
    process = subprocess.Popen(
        command, env=agent_environment(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None
    # When an agent sends lines it cannot read (each hung the agent's call: no reply ever came),
    # then a valid request
    ping = b'{"jsonrpc": "2.0", "id": %d, "method": "ping", "params": {"x": %s}}'
    lines = [
        ping % (1, b'"\\ud800"'),  # a lone surrogate
        ping % (2, b'"\xff\xfe"'),  # bytes that are not UTF-8
        b"this is not JSON",
        ping % (4, b"[" * 100 + b"]" * 100),  # deeper than the JSON limit
        b"[" * 100_000 + b"]" * 100_000,  # deeper than Python's recursion limit
        ping % (6, b"1" * 5000),  # an integer Python refuses to convert
        b'{"id": 7}',  # JSON, but no JSON-RPC message
        ping % (8, b"true"),
    ]
    process.stdin.write(b"\n".join(lines) + b"\n")
    process.stdin.flush()
    replies: list[dict[str, Any]] = []
    deadline = time.monotonic() + 120  # a bound on a hang, not a timing: a loaded box starts the server slowly
    try:
        while len(replies) < len(lines) and time.monotonic() < deadline:
            if select.select([process.stdout], [], [], 1)[0]:
                replies.append(json.loads(process.stdout.readline()))
    finally:
        process.kill()
        process.communicate()
    # Then each bad line is answered with a JSON-RPC error naming why, with its request's id when
    # one can be read, and the valid request after them is served
    errors = {reply["id"]: reply["error"] for reply in replies if "error" in reply}
    assert [reply["id"] for reply in replies] == [1, 2, None, 4, None, 6, 7, 8], replies
    codes = [reply["error"]["code"] for reply in replies if "error" in reply]
    assert codes == [-32700] * 6 + [-32600], replies
    assert "lone surrogate" in errors[1]["message"] and "utf-8" in errors[2]["message"]
    assert "deeper than 32" in errors[4]["message"] and "digits" in errors[6]["message"]
    assert replies[-1] == {"jsonrpc": "2.0", "id": 8, "result": {}}


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("search_memory", {"query": "deploy", "topK": 1000}, "validation_error: topK: Input should be less than"),
        ("remember", {"observations": [{"title": "no content"}]}, "validation_error: observations.0.content: Field"),
        ("search_memory", {"query": "deploy", "filters": {"tiers": ["Z"]}}, "validation_error: filters.tiers.0: "),
        ("get_memory", {}, "validation_error: id: Field required"),
    ],
)
def test_arguments_the_tool_schema_refuses_carry_the_api_error_code_and_message(
    service: Service, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    # Given the MCP server over the embedded store, as `neural-memory mcp` builds it
    server = build_server(EmbeddedBackend(service, "acme"), structured_content=True)

    async def session() -> tuple[bool, str, bool]:
        async with Client(server) as agent:
            refused = await agent.call_tool(tool, arguments)
            still = await agent.call_tool("search_memory", {"query": "deploy"})
            return refused.is_error, text_of(refused), not still.is_error

    # When an argument breaks the tool's schema
    is_error, text, still_serving = anyio.run(session)
    # Then the tool error is the API's code and message, one line, not pydantic's dump; the server carries on
    assert is_error and text.startswith(expected), text
    assert "pydantic" not in text and "\n" not in text and still_serving, text


def test_two_turns_an_agent_remembers_one_by_one_give_the_second_its_context(service: Service) -> None:
    # Given the MCP server over the embedded store, as `neural-memory mcp` builds it
    server = build_server(EmbeddedBackend(service, "acme"), structured_content=True)
    turn = {"observationType": "conversation_turn", "sessionId": "chat-9"}
    question = {**turn, "id": "q", "actorName": "Ana", "occurredAt": "2025-12-12T10:00:00Z",
                "content": "Did the zeppelin migration finish?"}  # fmt: skip
    answer = {**turn, "id": "a", "actorName": "Ben", "occurredAt": "2025-12-12T10:01:00Z",
              "content": "Yes, last Tuesday."}  # fmt: skip

    async def session() -> dict[str, SearchResponse]:
        async with Client(server) as agent:
            # When an agent remembers a question, then its answer, each in a call of its own
            for said in (question, answer):
                structured(await agent.call_tool("remember", {"observations": [said]}))
            replies = {}
            for mode in ("semantic", "keyword"):
                found = await agent.call_tool("search_memory", {"query": "zeppelin migration", "topK": 5, "mode": mode})
                replies[mode] = SearchResponse.model_validate(structured(found))
            return replies

    replies = anyio.run(session)
    # Then the answer has its own chunk and a context chunk (searched both ways) with the question before it
    own, context = stored_chunks(service.store, "acme", "a")
    assert own == ("Yes, last Tuesday.", True, True)
    assert context == ("Ana: Did the zeppelin migration finish?\nBen: Yes, last Tuesday.", True, True)
    # And the first turn has none (nothing came before it in its session)
    assert len(stored_chunks(service.store, "acme", "q")) == 1
    # And a search by meaning, or by the words of what the answer answers, finds it showing only its own words
    for reply in replies.values():
        assert {r.id for r in reply.results} == {"q", "a"}
        assert next(r for r in reply.results if r.id == "a").snippet == "Yes, last Tuesday."


def test_a_conversation_remembered_with_tier_a_is_found_by_meaning_after_the_window_and_by_default_only_by_words(
    service: Service,
) -> None:
    # Given two conversations an agent remembers ten days after they happened (past C's 7-day window):
    # one as conversation turns by default (tier C), one the same with tier A, as the tools say
    server = build_server(EmbeddedBackend(service, "acme"), structured_content=True)
    old = (NOW - timedelta(days=10)).isoformat()
    turn = {"observationType": "conversation_turn", "actorName": "Ana", "occurredAt": old}
    default = {**turn, "id": "kept-by-words", "sessionId": "s1",
               "content": "My greyhound Pixel finally learned to fetch the frisbee."}  # fmt: skip
    kept = {**turn, "id": "kept-by-meaning", "sessionId": "s2", "tier": "A",
            "content": "I repaint the kayak in bright orange every spring."}  # fmt: skip

    async def session() -> dict[str, set[str]]:
        async with Client(server) as agent:
            structured(await agent.call_tool("remember", {"observations": [default, kept]}))
            found: dict[str, set[str]] = {}
            for name, query, mode in (
                ("dog by meaning", "a dog that plays catch", "semantic"),
                ("boat by meaning", "painting a canoe", "semantic"),
                ("dog by words", "greyhound frisbee", "keyword"),
            ):
                reply = await agent.call_tool("search_memory", {"query": query, "mode": mode})
                found[name] = {r.id for r in SearchResponse.model_validate(structured(reply)).results}
            return found

    found = anyio.run(session)
    # Then the tier A conversation is found by meaning; the default one is not, and is still found by its words
    assert found["boat by meaning"] == {"kept-by-meaning"}
    assert "kept-by-words" not in found["dog by meaning"]
    assert found["dog by words"] == {"kept-by-words"}
