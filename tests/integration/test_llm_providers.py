"""The LLM providers (Anthropic, OpenAI) behind one contract, and the fallback from one to the other:
gate, LLM rerank, answers and autoFilters through the real SDKs, with only the HTTP transport faked.

OpenAI is asked for a forced function call (``tool_choice`` naming the function), the same
contract as Claude's forced tool use; every failure (429, 5xx, a timeout, a reply that is not
JSON, no function call, arguments that are not JSON) takes the path an Anthropic failure takes.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from neural_memory.answer.answering import LlmAnswerer
from neural_memory.clock import to_iso
from neural_memory.models import AnswerRequest, SearchRequest
from neural_memory.providers.llm import openai_tool
from neural_memory.providers.llm.fallback import FallbackProvider
from neural_memory.providers.llm.gating import _TOOL as GATE_TOOL
from neural_memory.providers.llm.gating import LlmScorer
from neural_memory.search.filters.inference import LlmFilterProposer
from neural_memory.service import Service
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.fakes import HashEmbedder
from tests.helpers.llm_wires import (
    FakeOpenAI,
    claude_provider,
    openai_error,
    openai_reply,
    openai_scores_by_title,
    raise_timeout,
)
from tests.helpers.pipeline import (
    DEPLOY_NOTES,
    NOW,
    FakeClaude,
    FakeCohere,
    claude_reply,
    cohere_prefers,
    note,
    request,
    score_by_title,
    service,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from neural_memory.models import SearchResponse
    from neural_memory.providers.llm.base import LlmProvider
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration
QUOTE = "NEXT_PUBLIC_API_URL was missing"

# How OpenAI can fail, and the gate's reason for each: the SDK's errors, and replies it cannot use.
FAILURES: list[tuple[str, Any, str]] = [
    ("429", lambda body: openai_error(429, "rate_limit_exceeded"), "error"),
    ("500", lambda body: openai_error(500, "server_error"), "error"),
    ("503", lambda body: openai_error(503, "overloaded"), "error"),
    ("timeout", raise_timeout, "timeout"),
    ("not json", lambda body: httpx2.Response(200, text="<html>oops</html>"), "error"),
    ("no function call", lambda body: httpx2.Response(
        200, json=openai_reply("x", {}, tool_calls=None, content="I think c1 is relevant")), "error"),
    ("arguments not json", lambda body: httpx2.Response(
        200, json=openai_reply("record_relevance", '{"scores": [{"id": "c1", "sco')), "error"),
    ("malformed scores", lambda body: httpx2.Response(
        200, json=openai_reply("record_relevance", {"scores": [{"id": "c1", "score": "high"}]})), "error"),
]  # fmt: skip
# What `degraded` says of a failed answer, by failure.
ANSWER_REASONS = {
    "429": "RateLimitError",
    "500": "InternalServerError",
    "503": "InternalServerError",
    "timeout": "timeout",
    "not json": "malformed reply",
    "no function call": "malformed reply",
    "arguments not json": "malformed reply",
    "malformed scores": "malformed reply",
}
IDS = [f[0] for f in FAILURES]
# What a search without a reranker says: balanced, the default, degrades to fast without Cohere.
NO_COHERE = "rerank:balanced->fast (Cohere not configured)"


def _any_reply(name: str, arguments: dict[str, Any]) -> Callable[[dict[str, Any]], httpx2.Response]:
    """A reply calling ``name`` with ``arguments`` whatever was asked."""
    return lambda body: httpx2.Response(200, json=openai_reply(name, arguments))


def _for_tool(tool: str, respond: Callable[[dict[str, Any]], httpx2.Response]) -> Any:
    """``respond``, with the failure replies that name a function renamed to ``tool``."""

    def answer(body: dict[str, Any]) -> httpx2.Response:
        reply = respond(body)
        if reply.status_code == 200 and reply.headers.get("content-type", "").startswith("application/json"):
            data = reply.json()
            for call in data["choices"][0]["message"].get("tool_calls") or []:
                call["function"]["name"] = tool
            return httpx2.Response(200, json=data)
        return reply

    return answer


# ----------------------------------------------------------------------------- gate


def test_openai_gate_scores_with_a_forced_function_call(settings: Settings) -> None:
    # Given seven deploy notes and an OpenAI model that finds only the failure notes relevant
    wire = FakeOpenAI(openai_scores_by_title("fail"))
    svc = service(settings, scorer=LlmScorer(wire.provider()))
    svc.index("acme", DEPLOY_NOTES)
    # When searching (fast rerank: the gate alone)
    reply = svc.search("acme", request(rerank="fast"), "r1")
    # Then one Chat Completions call forced the gate's function, with its schema, the system prompt
    # as the system message and the candidates as data in the user message, at the design's
    # temperature, sent as the API's own parameter
    (body,) = wire.requests
    assert wire.paths == ["/v1/chat/completions"] and body["model"] == "gpt-4.1-mini"
    assert body["temperature"] == 0.1
    assert body["tool_choice"] == {"type": "function", "function": {"name": "record_relevance"}}
    (tool,) = body["tools"]
    assert tool["type"] == "function" and tool["function"]["name"] == "record_relevance"
    assert tool["function"]["parameters"] == GATE_TOOL["input_schema"]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "untrusted data" in body["messages"][0]["content"] and body["max_completion_tokens"] > 0
    # And the irrelevant notes were dropped, the rest blended as with Claude
    assert (reply.llm.bypassed, reply.llm.filtered) == (False, 5)
    assert {r.id for r in reply.results} == {"d1", "d2"} and reply.degraded == []
    assert all(r.scores.llm == 0.9 for r in reply.results)


# What the OpenAI API answers a model that takes only its default temperature (the reasoning
# models: o1, o3, o4-mini, gpt-5): a 400 naming the parameter.
OPENAI_TEMPERATURE_REFUSED: dict[str, Any] = {
    "error": {
        "message": "Unsupported value: 'temperature' does not support 0.1 with this model. "
        "Only the default (1) value is supported.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "unsupported_value",
    }
}


def test_an_openai_model_that_refuses_the_temperature_is_called_without_it(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Given an OpenAI model that answers 400 to any temperature
    monkeypatch.setattr(openai_tool, "_REFUSES_TEMPERATURE", set())
    scores = openai_scores_by_title("fail")

    def respond(body: dict[str, Any]) -> httpx2.Response:
        if "temperature" in body:
            return httpx2.Response(400, json=OPENAI_TEMPERATURE_REFUSED)
        return scores(body)

    wire = FakeOpenAI(respond)
    svc = service(settings, scorer=LlmScorer(wire.provider(model="o4-mini")))
    svc.index("acme", DEPLOY_NOTES)
    # When searching twice
    first = svc.search("acme", request(rerank="fast"), "r1")
    svc.index("acme", [note("d3", "deploy checklist v2", "Check secrets too.")])  # so that one is not cached
    svc.search("acme", request(rerank="fast"), "r2")
    # Then the first call was refused, repeated without the temperature and answered; the refusal
    # was logged with the provider's error; and the model was not offered a temperature again
    assert ["temperature" in r for r in wire.requests] == [True, False, False]
    assert (first.llm.bypassed, first.llm.filtered, first.degraded) == (False, 5, [])
    (warning,) = [r for r in caplog.records if "refused a temperature" in r.getMessage()]
    assert warning.__dict__["provider"] == "openai" and "Only the default" in str(warning.__dict__["provider_error"])
    assert sorted(openai_tool._REFUSES_TEMPERATURE) == ["o4-mini"]


def test_an_openai_400_about_something_else_is_not_retried(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_tool, "_REFUSES_TEMPERATURE", set())
    wire = FakeOpenAI(lambda body: openai_error(400, "context_length_exceeded"))
    svc = service(settings, scorer=LlmScorer(wire.provider()))
    svc.index("acme", DEPLOY_NOTES)
    reply = svc.search("acme", request(), "r1")
    assert len(wire.requests) == 1 and (reply.llm.bypassed, reply.llm.reason) == (True, "error")
    assert not openai_tool._REFUSES_TEMPERATURE


@pytest.mark.parametrize(("name", "respond", "reason"), FAILURES, ids=IDS)
def test_an_openai_gate_failure_falls_back_to_vector_scores(
    settings: Settings, name: str, respond: Any, reason: str
) -> None:
    svc = service(settings, scorer=LlmScorer(FakeOpenAI(respond).provider()))
    svc.index("acme", DEPLOY_NOTES)
    baseline = service(settings).search("acme", request(llm_filter=False), "r")
    reply = svc.search("acme", request(), "r1")
    assert (reply.llm.bypassed, reply.llm.reason, reply.llm.filtered) == (True, reason, 0)
    assert [r.id for r in reply.results] == [r.id for r in baseline.results]


# ----------------------------------------------------------------------------- LLM rerank


def test_openai_reranks_thoroughly_after_cohere(settings: Settings) -> None:
    cohere = FakeCohere(cohere_prefers("deploy"))
    wire = FakeOpenAI(openai_scores_by_title("rollback", hit=0.8, miss=0.3))
    svc = service(settings, scorer=LlmScorer(wire.provider()), reranker=cohere.reranker())
    svc.index("acme", DEPLOY_NOTES)
    reply = svc.search("acme", request(rerank="thorough", llm_filter=False, top_k=3), "r")
    assert len(wire.requests) == 1 and len(cohere.requests) == 1
    # Scored by OpenAI (once, at the gate's temperature), blended as the gate blends: 0.6 llm + 0.4 vector
    assert wire.requests[0]["temperature"] == 0.1
    top = reply.results[0]
    assert top.id == "d2" and top.scores.llm == 0.8
    assert top.scores.rerank == pytest.approx(0.6 * 0.8 + 0.4 * (top.scores.vector or 0.0), abs=1e-3)
    assert reply.degraded == []


@pytest.mark.parametrize(("name", "respond", "reason"), FAILURES, ids=IDS)
def test_an_openai_rerank_failure_degrades_and_says_so(
    settings: Settings, name: str, respond: Any, reason: str
) -> None:
    cohere = FakeCohere(cohere_prefers("Fridays"))
    svc = service(settings, scorer=LlmScorer(FakeOpenAI(respond).provider()), reranker=cohere.reranker())
    svc.index("acme", DEPLOY_NOTES)
    reply = svc.search("acme", request(rerank="thorough", llm_filter=False), "r")
    assert any(d.startswith("rerank:thorough->") and f"LLM rerank failed ({reason})" in d for d in reply.degraded)
    assert reply.results[0].id == "d6"  # Cohere's order


# ----------------------------------------------------------------------------- answers


def _answering(settings: Settings, answerer: LlmAnswerer) -> Service:
    """A service over the deploy notes that answers with ``answerer`` (no gate, no reranker)."""
    svc = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW, answerer=answerer)
    svc.index("acme", DEPLOY_NOTES)
    return svc


def _answer(svc: Service) -> Any:
    return svc.answer("acme", AnswerRequest.model_validate({"question": "why did the deploy fail"}), "r")


def test_openai_answers_with_citations(settings: Settings) -> None:
    cited = {"answer": "An env var was missing [1].", "citations": [{"id": "d1", "quote": QUOTE}]}
    wire = FakeOpenAI(_any_reply("answer_with_citations", cited))
    reply = _answer(_answering(settings, LlmAnswerer(wire.provider())))
    assert reply.method == "llm" and reply.answer == "An env var was missing [1]."
    assert [(c.id, c.quote) for c in reply.citations] == [("d1", QUOTE)] and reply.degraded == [NO_COHERE]
    assert wire.requests[0]["tool_choice"] == {"type": "function", "function": {"name": "answer_with_citations"}}
    assert "temperature" not in wire.requests[0]  # only the gate and the LLM rerank ask for one


@pytest.mark.parametrize(("name", "respond", "reason"), FAILURES, ids=IDS)
def test_an_openai_answer_failure_answers_extractively_and_says_why(
    settings: Settings, name: str, respond: Any, reason: str
) -> None:
    answerer = LlmAnswerer(FakeOpenAI(_for_tool("answer_with_citations", respond)).provider())
    reply = _answer(_answering(settings, answerer))
    assert reply.method == "extractive" and reply.citations
    assert f"answer:llm->extractive ({ANSWER_REASONS[name]})" in reply.degraded, reply.degraded


# ----------------------------------------------------------------------------- autoFilters


def _team(svc: Service) -> None:
    svc.index("acme", [
        note("p1", "login redirect fixed", source="github", observation_type="push", actor_name="alice",
             occurred_at=NOW - timedelta(days=2)),
        note("p2", "login page styles", source="github", observation_type="push", actor_name="bob",
             occurred_at=NOW - timedelta(days=2)),
        note("p3", "login tokens rotated", source="github", observation_type="push", actor_name="alice",
             occurred_at=NOW - timedelta(days=20)),
    ])  # fmt: skip


def _auto(svc: Service, query: str, top_k: int = 1) -> SearchResponse:
    body = {"query": query, "topK": top_k, "mode": "keyword", "llmFilter": False, "autoFilters": True, "rerank": "fast"}
    return svc.search("acme", SearchRequest.model_validate(body), "r")


def test_openai_infers_filters_from_the_workspace_values(settings: Settings) -> None:
    last_week = {"start": to_iso(NOW - timedelta(days=7)), "end": to_iso(NOW)}
    wire = FakeOpenAI(_any_reply("apply_filters", {"query": "login", "actorNames": ["alice"], "dateRange": last_week}))
    svc = service(settings, proposer=LlmFilterProposer(wire.provider()))
    _team(svc)
    reply = _auto(svc, "what did alice do last week")
    assert [r.id for r in reply.results] == ["p1"]
    assert reply.auto_filters is not None and reply.auto_filters.by == "llm"
    parameters = wire.requests[0]["tools"][0]["function"]["parameters"]
    assert set(parameters["properties"]["actorNames"]["items"]["enum"]) == {"alice", "bob"}


@pytest.mark.parametrize(("name", "respond", "reason"), FAILURES, ids=IDS)
def test_an_openai_inference_failure_keeps_the_time_phrases_and_says_so(
    settings: Settings, name: str, respond: Any, reason: str
) -> None:
    svc = service(settings, proposer=LlmFilterProposer(FakeOpenAI(_for_tool("apply_filters", respond)).provider()))
    _team(svc)
    reply = _auto(svc, "login in the last 7 days", 2)
    assert reply.auto_filters is not None and reply.auto_filters.by == "rules"
    assert reply.auto_filters.phrases == ["in the last 7 days"]
    assert any(d.startswith(f"autoFilters:llm {reason} (") for d in reply.degraded), reply.degraded


# ----------------------------------------------------------------------------- fallback

FIRST_FAILS = [f for f in FAILURES if f[0] in ("429", "500", "503", "timeout")]
NOTES = {
    "429": "429 RateLimitError",
    "500": "500 InternalServerError",
    "503": "503 InternalServerError",
    "timeout": "timeout",
}


def _chain(first: Any, claude: FakeClaude) -> LlmProvider:
    return FallbackProvider(FakeOpenAI(first).provider(), claude_provider(claude))


@pytest.mark.parametrize(("name", "respond", "reason"), FIRST_FAILS, ids=[f[0] for f in FIRST_FAILS])
def test_when_openai_fails_claude_gates_and_degraded_names_the_fallback(
    settings: Settings, name: str, respond: Any, reason: str
) -> None:
    # Given OpenAI first, failing, and Claude second
    claude = FakeClaude(score_by_title("fail"))
    svc = service(settings, scorer=LlmScorer(_chain(respond, claude)))
    svc.index("acme", DEPLOY_NOTES)
    # When searching (fast rerank: the gate alone)
    reply = svc.search("acme", request(rerank="fast"), "r1")
    # Then Claude's scores gated the results, and degraded says who stood in and why
    assert len(claude.requests) == 1 and claude.requests[0]["temperature"] == 0.1  # the same call
    assert (reply.llm.bypassed, reply.llm.filtered) == (False, 5) and {r.id for r in reply.results} == {"d1", "d2"}
    assert reply.degraded == [f"llm:openai->anthropic (record_relevance: {NOTES[name]})"]


def test_the_fallback_stands_in_for_rerank_answers_and_autofilters(settings: Settings) -> None:
    # Given OpenAI answering 500 to everything, and Claude behind it
    down = lambda body: openai_error(500, "server_error")  # noqa: E731
    rerank_claude = FakeClaude(score_by_title("rollback", hit=0.8, miss=0.3))
    cohere = FakeCohere(cohere_prefers("deploy"))
    svc = service(settings, scorer=LlmScorer(_chain(down, rerank_claude)), reranker=cohere.reranker())
    svc.index("acme", DEPLOY_NOTES)
    # When reranking thoroughly, Then Claude ordered the results, named as the fallback
    reply = svc.search("acme", request(rerank="thorough", llm_filter=False, top_k=3), "r")
    top = reply.results[0]
    assert top.id == "d2" and top.scores.llm == 0.8
    assert reply.degraded == ["llm:openai->anthropic (record_relevance: 500 InternalServerError)"]
    # When answering, Then Claude's answer is the reply's, named as the fallback
    block = {"type": "tool_use", "id": "t", "name": "answer_with_citations",
             "input": {"answer": "A missing env var.", "citations": [{"id": "d1", "quote": QUOTE}]}}  # fmt: skip
    answer_claude = FakeClaude(lambda body: httpx2.Response(200, json=claude_reply(content=[block])))
    answered = _answer(_answering(settings, LlmAnswerer(_chain(down, answer_claude))))
    assert answered.method == "llm" and answered.answer == "A missing env var."
    assert answered.degraded == [NO_COHERE, "llm:openai->anthropic (answer_with_citations: 500 InternalServerError)"]
    # When inferring filters, Then Claude's filters applied, named as the fallback
    filters = {
        "type": "tool_use",
        "id": "t",
        "name": "apply_filters",
        "input": {"query": "login", "actorNames": ["bob"]},
    }
    filter_claude = FakeClaude(lambda body: httpx2.Response(200, json=claude_reply(content=[filters])))
    team = service(settings, proposer=LlmFilterProposer(_chain(down, filter_claude)))
    _team(team)
    inferred = _auto(team, "what did bob do on login")
    assert [r.id for r in inferred.results] == ["p2"]
    assert inferred.auto_filters is not None and inferred.auto_filters.by == "llm"
    assert inferred.degraded == ["llm:openai->anthropic (apply_filters: 500 InternalServerError)"]


def test_claude_first_falls_back_to_openai_when_overloaded(settings: Settings) -> None:
    claude = FakeClaude(
        lambda body: httpx2.Response(529, json={"type": "error", "error": {"type": "overloaded_error"}})
    )
    wire = FakeOpenAI(openai_scores_by_title("fail"))
    svc = service(settings, scorer=LlmScorer(FallbackProvider(claude_provider(claude), wire.provider())))
    svc.index("acme", DEPLOY_NOTES)
    reply = svc.search("acme", request(rerank="fast"), "r1")
    assert len(claude.requests) == len(wire.requests) == 1
    assert {r.id for r in reply.results} == {"d1", "d2"}
    assert reply.degraded == ["llm:anthropic->openai (record_relevance: 529 OverloadedError)"]


def test_both_failing_take_the_usual_degradation_with_both_reasons(settings: Settings) -> None:
    # Given OpenAI rate-limited and Claude timing out
    claude = FakeClaude(raise_timeout)
    chain = _chain(lambda body: openai_error(429, "rate_limit_exceeded"), claude)
    svc = service(settings, scorer=LlmScorer(chain), proposer=LlmFilterProposer(chain))
    svc.index("acme", DEPLOY_NOTES)
    baseline = service(settings).search("acme", request(llm_filter=False), "r")
    # When searching, Then the gate is bypassed as when one provider fails, and no fallback is claimed
    reply = svc.search("acme", request(), "r1")
    assert (reply.llm.bypassed, reply.llm.reason) == (True, "error")
    assert [r.id for r in reply.results] == [r.id for r in baseline.results]
    assert not any(d.startswith("llm:") for d in reply.degraded)
    # And autoFilters names both failures
    inferred = svc.search(
        "acme", SearchRequest.model_validate({"query": "deploy in the last 7 days", "autoFilters": True}), "r"
    )
    assert (
        "autoFilters:llm error (openai: LLM call failed: 429 RateLimitError; "
        "anthropic: LLM call exceeded its time budget); time phrases only"
    ) in inferred.degraded


def test_a_malformed_reply_is_not_asked_again_elsewhere(settings: Settings) -> None:
    claude = FakeClaude(score_by_title("fail"))
    no_call = lambda body: httpx2.Response(200, json=openai_reply("x", {}, tool_calls=None, content="hm"))  # noqa: E731
    svc = service(settings, scorer=LlmScorer(_chain(no_call, claude)))
    svc.index("acme", DEPLOY_NOTES)
    reply = svc.search("acme", request(), "r1")
    assert claude.requests == [] and (reply.llm.bypassed, reply.llm.reason) == (True, "error")
