"""Shared set-up for pipeline tests: a service over SQLite with the hashing test embedder, and
fake wires for the Anthropic and Cohere APIs (the SDKs run for real above them)."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx
import httpx2
from neural_memory.models import ObservationIn, SearchRequest
from neural_memory.providers.llm.gating import AnthropicScorer
from neural_memory.providers.rerank.cohere import CohereReranker
from neural_memory.search.filters.inference import AnthropicFilterProposer
from neural_memory.service import Service
from neural_memory.stores.sqlite.store import SqliteStore
from pydantic.alias_generators import to_camel

from tests.helpers.fakes import HashEmbedder

if TYPE_CHECKING:
    from collections.abc import Callable

    from neural_memory.settings import Settings

NOW = datetime(2025, 12, 14, 12, 0, tzinfo=UTC)


def note(obs_id: str, title: str, content: str = "", **extra: Any) -> ObservationIn:
    fields: dict[str, Any] = {
        "id": obs_id, "source": "manual", "observation_type": "note", "occurred_at": NOW - timedelta(hours=1),
        "title": title, "content": content, **extra,
    }  # fmt: skip
    return ObservationIn.model_validate({to_camel(name): value for name, value in fields.items()})


DEPLOY_NOTES = [
    note("d1", "deploy failed: missing env var", "The deploy failed because NEXT_PUBLIC_API_URL was missing."),
    note("d2", "deploy rollback after failure", "We rolled the deploy back after the failure."),
    note("d3", "deploy checklist", "Check env vars before every deploy."),
    note("d4", "deploy pipeline timing", "The deploy pipeline takes eight minutes."),
    note("d5", "deploy to preview", "Preview deploy succeeded."),
    note("d6", "deploy freeze on friday", "No deploy on Fridays after noon."),
    note("d7", "lunch menu", "Tacos on Tuesday; the deploy bot posts the menu."),
]


def service(
    settings: Settings,
    scorer: Any = None,
    reranker: Any = None,
    proposer: Any = None,
    clock: Callable[[], datetime] = lambda: NOW,
) -> Service:
    store = SqliteStore(settings.sqlite_path)
    return Service(store, HashEmbedder(), settings, clock=clock, scorer=scorer, reranker=reranker, proposer=proposer)


def with_providers(svc: Service, scorer: Any = None, reranker: Any = None) -> Service:
    """The same store, embedder and settings as ``svc`` (e.g. the two-store fixture's), with an LLM
    scorer and a reranker."""
    return Service(svc.store, svc.embedder, svc.settings, clock=lambda: NOW, scorer=scorer, reranker=reranker)


def request(query: str = "why did the deploy fail", **fields: Any) -> SearchRequest:
    return SearchRequest.model_validate({"query": query, **{to_camel(name): value for name, value in fields.items()}})


# ----------------------------------------------------------------------------- Anthropic wire


def claude_reply(scores: list[dict[str, Any]] | None = None, **override: Any) -> dict[str, Any]:
    """A Messages API reply whose only block is our tool call."""
    body: dict[str, Any] = {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "record_relevance", "input": {"scores": scores}}],
        "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 40},
    }  # fmt: skip
    body.update(override)
    return body


# What the Anthropic API answers a model that no longer takes a temperature (Claude Opus 4.7 and
# later; and, per Anthropic's migration notes, every model under API version 2026-10-21, which the
# installed SDK sends): the body as reported verbatim in BerriAI/litellm issue #26444 (2026).
TEMPERATURE_REFUSED: dict[str, Any] = {
    "type": "error",
    "error": {"type": "invalid_request_error", "message": "`temperature` is deprecated for this model."},
    "request_id": "req_011CaNyc6Kpmz9bA66oSzTKo",
}


def sent_candidates(request_body: dict[str, Any]) -> list[dict[str, Any]]:
    """The candidates JSON the scorer put in its user message."""
    text = request_body["messages"][0]["content"]
    found: list[dict[str, Any]] = json.loads(text[text.index("[") :])
    return found


class FakeClaude:
    """The Anthropic API on a mock transport: records requests, answers with ``respond``."""

    def __init__(self, respond: Callable[[dict[str, Any]], httpx2.Response], latency_s: float = 0.005) -> None:
        self.requests: list[dict[str, Any]] = []
        self._respond = respond
        self._latency_s = latency_s

    def handle(self, req: httpx2.Request) -> httpx2.Response:
        body = json.loads(req.content)
        self.requests.append(body)
        time.sleep(self._latency_s)  # a wire has latency; llmFilter must measure it
        return self._respond(body)

    def scorer(self) -> AnthropicScorer:
        client = httpx2.Client(transport=httpx2.MockTransport(self.handle))
        return AnthropicScorer(api_key="test-key", timeout_s=1.0, http_client=client)

    def proposer(self) -> AnthropicFilterProposer:
        client = httpx2.Client(transport=httpx2.MockTransport(self.handle))
        return AnthropicFilterProposer(api_key="test-key", timeout_s=1.0, http_client=client)


def score_by_title(pattern: str, hit: float = 0.9, miss: float = 0.1) -> Callable[[dict[str, Any]], httpx2.Response]:
    """Scores candidates whose title matches ``pattern`` high, others low."""

    def respond(body: dict[str, Any]) -> httpx2.Response:
        scores = [
            {"id": c["id"], "score": hit if re.search(pattern, c["title"]) else miss} for c in sent_candidates(body)
        ]
        return httpx2.Response(200, json=claude_reply(scores))

    return respond


# ----------------------------------------------------------------------------- Cohere wire


class FakeCohere:
    """The Cohere rerank API on a mock transport."""

    def __init__(self, respond: Callable[[dict[str, Any]], httpx.Response]) -> None:
        self.requests: list[dict[str, Any]] = []
        self._respond = respond

    def handle(self, req: httpx.Request) -> httpx.Response:
        body = json.loads(req.content)
        self.requests.append(body)
        return self._respond(body)

    def reranker(self) -> CohereReranker:
        return CohereReranker(
            api_key="test-key", timeout_s=1.0, http_client=httpx.Client(transport=httpx.MockTransport(self.handle))
        )


def cohere_prefers(word: str) -> Callable[[dict[str, Any]], httpx.Response]:
    """Reranks documents containing ``word`` first."""

    def respond(body: dict[str, Any]) -> httpx.Response:
        docs = body["documents"]
        ranked = sorted(range(len(docs)), key=lambda i: (word not in docs[i], i))[: body.get("top_n", len(docs))]
        results = [{"index": i, "relevance_score": 0.95 if word in docs[i] else 0.2} for i in ranked]
        return httpx.Response(200, json={"id": "rr1", "results": results, "meta": {"api_version": {"version": "2"}}})

    return respond
