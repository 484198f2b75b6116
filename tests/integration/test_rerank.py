"""Rerank modes through the real cohere and anthropic SDKs (HTTP faked), and every degradation."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import httpx2
import pytest

from tests.helpers.pipeline import (
    DEPLOY_NOTES,
    FakeClaude,
    FakeCohere,
    cohere_prefers,
    request,
    score_by_title,
    service,
)

if TYPE_CHECKING:
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration


def test_balanced_reranks_with_cohere(settings: Settings) -> None:
    # Given Cohere preferring notes about Fridays
    cohere = FakeCohere(cohere_prefers("Fridays"))
    svc = service(settings, reranker=cohere.reranker())
    svc.index("acme", DEPLOY_NOTES)
    # When searching in balanced mode
    reply = svc.search("acme", request(rerank="balanced", llm_filter=False, top_k=3), "r")
    # Then Cohere's order and scores are the reply's, from one call with model and top_n set
    assert reply.results[0].id == "d6"
    assert reply.results[0].scores.rerank == 0.95 and reply.results[0].score == 0.95
    assert reply.degraded == []
    assert len(cohere.requests) == 1
    assert cohere.requests[0]["model"] == "rerank-v3.5" and cohere.requests[0]["top_n"] == 3


def test_cohere_results_below_its_floor_are_dropped_and_counted(settings: Settings) -> None:
    # Given Cohere scoring notes about Fridays 0.95 and every other note 0.2
    cohere = FakeCohere(cohere_prefers("Fridays"))
    svc = service(settings, reranker=cohere.reranker())
    svc.index("acme", DEPLOY_NOTES)
    # When searching in balanced mode with the default floor, and with one of 0.1
    default = svc.search("acme", request(rerank="balanced", llm_filter=False, top_k=5), "r")
    lowered = svc.search("acme", request(rerank="balanced", llm_filter=False, top_k=5, rerank_min_score=0.1), "r")
    # Then the 0.4 default keeps only the 0.95 ones and counts the rest in `threshold`
    assert [r.scores.rerank for r in default.results] == [0.95] * len(default.results) and default.results
    assert default.threshold.rerank_min_score == 0.4
    assert default.threshold.rerank_dropped == 5 - len(default.results)
    # and a floor of 0.1 keeps all five
    assert len(lowered.results) == 5
    assert (lowered.threshold.rerank_min_score, lowered.threshold.rerank_dropped) == (0.1, 0)


def test_the_llm_reranker_has_no_default_floor_and_fast_mode_none_at_all(settings: Settings) -> None:
    cohere = FakeCohere(cohere_prefers("deploy"))
    claude = FakeClaude(score_by_title("rollback", hit=0.8, miss=0.3))
    svc = service(settings, scorer=claude.scorer(), reranker=cohere.reranker())
    svc.index("acme", DEPLOY_NOTES)
    thorough = svc.search("acme", request(rerank="thorough", llm_filter=False, top_k=3), "r")
    fast = svc.search("acme", request(llm_filter=False, top_k=3, rerank_min_score=0.9), "r")
    assert len(thorough.results) == 3 and thorough.threshold.rerank_min_score is None
    assert any((r.scores.rerank or 0) < 0.4 for r in thorough.results)
    assert len(fast.results) == 3 and fast.threshold.rerank_min_score is None
    assert fast.threshold.rerank_dropped == 0


@pytest.mark.parametrize(
    "reply",
    [
        httpx.Response(429, json={"message": "slow down"}),
        httpx.Response(500, json={"message": "boom"}),
        httpx.Response(200, json={"unexpected": True}),
        httpx.Response(200, json={"id": "x", "results": [{"index": 99, "relevance_score": 0.5}]}),
    ],
    ids=["429", "500", "malformed", "index-out-of-range"],
)
def test_failing_cohere_degrades_balanced_to_fast(settings: Settings, reply: httpx.Response) -> None:
    cohere = FakeCohere(lambda body: reply)
    svc = service(settings, reranker=cohere.reranker())
    svc.index("acme", DEPLOY_NOTES)
    fast = svc.search("acme", request(llm_filter=False), "r")
    degraded = svc.search("acme", request(rerank="balanced", llm_filter=False), "r")
    assert len(degraded.degraded) == 1
    assert degraded.degraded[0].startswith("rerank:balanced->fast (Cohere rerank")
    assert [r.id for r in degraded.results] == [r.id for r in fast.results]
    assert all(r.scores.rerank is None for r in degraded.results)


def test_thorough_is_cohere_then_the_llm(settings: Settings) -> None:
    # Given Cohere preferring Fridays, and the LLM preferring rollbacks
    cohere = FakeCohere(cohere_prefers("deploy"))
    claude = FakeClaude(score_by_title("rollback", hit=0.8, miss=0.3))
    svc = service(settings, scorer=claude.scorer(), reranker=cohere.reranker())
    svc.index("acme", DEPLOY_NOTES)
    # When searching thoroughly (gate off, to isolate the reranker)
    reply = svc.search("acme", request(rerank="thorough", llm_filter=False, top_k=3), "r")
    # Then Cohere narrowed to 2 x topK and the LLM decided the order
    assert len(cohere.requests) == 1 and cohere.requests[0]["top_n"] == 6
    assert len(claude.requests) == 1 and len(claude.requests[0]["messages"][0]["content"]) > 0
    assert reply.results[0].id == "d2" and reply.results[0].scores.rerank == 0.8
    assert reply.degraded == [] and reply.latency.rerank > 0


def test_thorough_without_llm_degrades_to_balanced(settings: Settings) -> None:
    cohere = FakeCohere(cohere_prefers("Fridays"))
    svc = service(settings, reranker=cohere.reranker())
    svc.index("acme", DEPLOY_NOTES)
    reply = svc.search("acme", request(rerank="thorough", llm_filter=False), "r")
    assert reply.degraded == ["rerank:thorough->balanced (Cohere and an LLM are both needed)"]
    assert reply.results[0].id == "d6"


def test_thorough_with_failing_llm_degrades_to_balanced(settings: Settings) -> None:
    cohere = FakeCohere(cohere_prefers("Fridays"))
    claude = FakeClaude(lambda body: httpx2.Response(500, json={"type": "error", "error": {"type": "api_error"}}))
    svc = service(settings, scorer=claude.scorer(), reranker=cohere.reranker())
    svc.index("acme", DEPLOY_NOTES)
    reply = svc.search("acme", request(rerank="thorough", llm_filter=False), "r")
    assert reply.degraded == ["rerank:thorough->balanced (LLM rerank failed (error))"]
    assert reply.results[0].id == "d6"


def test_nothing_configured_degrades_all_the_way_to_fast(settings: Settings) -> None:
    svc = service(settings)
    svc.index("acme", DEPLOY_NOTES)
    reply = svc.search("acme", request(rerank="thorough", llm_filter=False), "r")
    assert reply.degraded == [
        "rerank:thorough->balanced (Cohere and an LLM are both needed)",
        "rerank:balanced->fast (Cohere not configured)",
    ]


def test_diversity_after_a_rerank_picks_from_more_than_the_top_k(settings: Settings) -> None:
    # Given Cohere preferring the note about Fridays, all others alike
    cohere = FakeCohere(cohere_prefers("Fridays"))
    svc = service(settings, reranker=cohere.reranker())
    svc.index("acme", DEPLOY_NOTES)
    # When two results are asked for with diversity
    plain = svc.search("acme", request(rerank="balanced", llm_filter=False, top_k=2, rerank_min_score=0.0), "r")
    varied = svc.search(
        "acme", request(rerank="balanced", llm_filter=False, top_k=2, rerank_min_score=0.0, diversity=0.9), "r"
    )
    # Then Cohere ranked every candidate, not just two, and MMR kept the best and one unlike it
    assert cohere.requests[0]["top_n"] == 2
    assert cohere.requests[1]["top_n"] == len(cohere.requests[1]["documents"]) > 2
    assert varied.results[0].id == plain.results[0].id
    assert varied.results[1].id != plain.results[1].id
