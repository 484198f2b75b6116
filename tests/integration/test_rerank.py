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
    sent_candidates,
    service,
    with_providers,
)
from tests.helpers.two_stores import svc  # noqa: F401 - the two-store fixture

if TYPE_CHECKING:
    from neural_memory.service import Service
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration


def test_balanced_reranks_with_cohere(settings: Settings) -> None:
    # Given Cohere preferring notes about Fridays
    cohere = FakeCohere(cohere_prefers("Fridays"))
    srv = service(settings, reranker=cohere.reranker())
    srv.index("acme", DEPLOY_NOTES)
    # When searching in balanced mode
    reply = srv.search("acme", request(rerank="balanced", llm_filter=False, top_k=3), "r")
    # Then Cohere's order and scores are the reply's, from one call with model and top_n set
    assert reply.results[0].id == "d6"
    assert reply.results[0].scores.rerank == 0.95 and reply.results[0].score == 0.95
    assert reply.degraded == []
    assert len(cohere.requests) == 1
    assert cohere.requests[0]["model"] == "rerank-v3.5" and cohere.requests[0]["top_n"] == 3


def test_cohere_results_below_its_floor_are_dropped_and_counted(settings: Settings) -> None:
    # Given Cohere scoring notes about Fridays 0.95 and every other note 0.2
    cohere = FakeCohere(cohere_prefers("Fridays"))
    srv = service(settings, reranker=cohere.reranker())
    srv.index("acme", DEPLOY_NOTES)
    # When searching in balanced mode with the default floor, and with one of 0.1
    default = srv.search("acme", request(rerank="balanced", llm_filter=False, top_k=5), "r")
    lowered = srv.search("acme", request(rerank="balanced", llm_filter=False, top_k=5, rerank_min_score=0.1), "r")
    # Then the 0.4 default keeps only the 0.95 ones and counts the rest in `threshold`
    assert [r.scores.rerank for r in default.results] == [0.95] * len(default.results) and default.results
    assert default.threshold.rerank_min_score == 0.4
    assert default.threshold.rerank_dropped == 5 - len(default.results)
    # and a floor of 0.1 keeps all five
    assert len(lowered.results) == 5
    assert (lowered.threshold.rerank_min_score, lowered.threshold.rerank_dropped) == (0.1, 0)


def test_the_llm_reranker_uses_the_gates_blend_and_floor(settings: Settings) -> None:
    # Given Cohere preferring every deploy note and an LLM that finds only the rollback relevant
    cohere = FakeCohere(cohere_prefers("deploy"))
    claude = FakeClaude(score_by_title("rollback", hit=0.8, miss=0.3))
    srv = service(settings, scorer=claude.scorer(), reranker=cohere.reranker())
    srv.index("acme", DEPLOY_NOTES)
    # When searching thoroughly (gate off, to isolate the reranker), with the default floor and one of 0.1
    thorough = srv.search("acme", request(rerank="thorough", llm_filter=False, top_k=3), "r")
    lowered = srv.search("acme", request(rerank="thorough", llm_filter=False, top_k=3, rerank_min_score=0.1), "r")
    fast = srv.search("acme", request(rerank="fast", llm_filter=False, top_k=3, rerank_min_score=0.9), "r")
    # Then the LLM's rerank is the gate's blend, 0.6 llm + 0.4 vector, and the gate's 0.4 floor on
    # the LLM's score dropped the two it found barely related (counted in `threshold`)
    (kept,) = thorough.results
    assert kept.id == "d2" and kept.scores.llm == 0.8
    assert kept.scores.rerank == kept.score == pytest.approx(0.6 * 0.8 + 0.4 * (kept.scores.vector or 0.0), abs=1e-3)
    assert (thorough.threshold.rerank_min_score, thorough.threshold.rerank_dropped) == (0.4, 2)
    assert len(lowered.results) == 3 and lowered.threshold.rerank_dropped == 0
    # And fast mode applies no floor at all
    assert len(fast.results) == 3 and fast.threshold.rerank_min_score is None
    assert fast.threshold.rerank_dropped == 0 and fast.rerank.provider is None


def test_the_default_mode_is_balanced_on_both_stores(svc: Service) -> None:  # noqa: F811
    # Given Cohere preferring notes about Fridays
    cohere = FakeCohere(cohere_prefers("Fridays"))
    reranked = with_providers(svc, reranker=cohere.reranker())
    reranked.index("acme", DEPLOY_NOTES)
    # When searching without naming a mode
    reply = reranked.search("acme", request(llm_filter=False, explain=True), "r")
    # Then Cohere reranked, and the reply and the explain say so
    assert (reply.rerank.mode, reply.rerank.provider) == ("balanced", "cohere")
    assert reply.results[0].id == "d6" and len(cohere.requests) == 1
    stage = next(s for s in reply.results[0].explain or [] if s.stage == "rerank")
    assert stage.note == "by cohere" and stage.score == 0.95
    # And without Cohere it degrades to fast with the reason, as before
    plain = svc.search("acme", request(llm_filter=False), "r")
    assert plain.degraded[-1] == "rerank:balanced->fast (Cohere not configured)"  # osmem: vector first
    assert (plain.rerank.mode, plain.rerank.provider) == ("balanced", None)


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
    srv = service(settings, reranker=cohere.reranker())
    srv.index("acme", DEPLOY_NOTES)
    fast = srv.search("acme", request(rerank="fast", llm_filter=False), "r")
    degraded = srv.search("acme", request(rerank="balanced", llm_filter=False), "r")
    assert len(degraded.degraded) == 1
    assert degraded.degraded[0].startswith("rerank:balanced->fast (Cohere rerank")
    assert len(cohere.requests) == 1  # no retry: the SDK's two are turned off
    assert [r.id for r in degraded.results] == [r.id for r in fast.results]
    assert all(r.scores.rerank is None for r in degraded.results)


def test_thorough_is_cohere_then_the_llm(settings: Settings) -> None:
    # Given Cohere preferring deploy notes, and the LLM preferring rollbacks
    cohere = FakeCohere(cohere_prefers("deploy"))
    claude = FakeClaude(score_by_title("rollback", hit=0.8, miss=0.3))
    srv = service(settings, scorer=claude.scorer(), reranker=cohere.reranker())
    srv.index("acme", DEPLOY_NOTES)
    # When searching thoroughly (gate off, to isolate the reranker)
    reply = srv.search("acme", request(rerank="thorough", llm_filter=False, top_k=3, explain=True), "r")
    # Then Cohere narrowed to 2 x topK and the LLM decided the order, each called once
    assert len(cohere.requests) == 1 and cohere.requests[0]["top_n"] == 6
    assert len(claude.requests) == 1 and len(sent_candidates(claude.requests[0])) == 6
    assert reply.results[0].id == "d2" and reply.results[0].scores.llm == 0.8
    assert reply.degraded == [] and reply.latency.rerank > 0
    assert (reply.rerank.mode, reply.rerank.provider) == ("thorough", "cohere+llm")
    stage = next(s for s in reply.results[0].explain or [] if s.stage == "rerank")
    assert stage.note == "by cohere+llm"


@pytest.mark.parametrize("cohere_reply", [None, httpx.Response(500, json={"message": "boom"})], ids=["absent", "500"])
def test_thorough_without_cohere_falls_back_to_the_llm_alone(
    settings: Settings, cohere_reply: httpx.Response | None
) -> None:
    # Given no Cohere, or a failing one, and an LLM preferring rollbacks
    cohere = FakeCohere(lambda body: cohere_reply) if cohere_reply is not None else None
    claude = FakeClaude(score_by_title("rollback", hit=0.8, miss=0.5))
    srv = service(settings, scorer=claude.scorer(), reranker=cohere.reranker() if cohere else None)
    srv.index("acme", DEPLOY_NOTES)
    # When searching thoroughly
    reply = srv.search("acme", request(rerank="thorough", llm_filter=False, top_k=3), "r")
    # Then the LLM reranked every candidate alone, named in `degraded` and in `rerank`
    assert len(claude.requests) == 1 and len(sent_candidates(claude.requests[0])) == len(DEPLOY_NOTES)
    assert reply.results[0].id == "d2" and reply.rerank.provider == "llm"
    (entry,) = reply.degraded
    why = "Cohere not configured" if cohere is None else "Cohere rerank failed: InternalServerError"
    assert entry == f"rerank:thorough->llm ({why})"
    assert cohere is None or len(cohere.requests) == 1


def test_thorough_without_llm_degrades_to_balanced(settings: Settings) -> None:
    cohere = FakeCohere(cohere_prefers("Fridays"))
    srv = service(settings, reranker=cohere.reranker())
    srv.index("acme", DEPLOY_NOTES)
    reply = srv.search("acme", request(rerank="thorough", llm_filter=False), "r")
    assert reply.degraded == ["rerank:thorough->balanced (no LLM configured)"]
    assert reply.results[0].id == "d6" and reply.rerank.provider == "cohere"
    assert len(cohere.requests) == 1


def test_thorough_with_failing_llm_keeps_cohere_s_order_without_calling_it_again(settings: Settings) -> None:
    cohere = FakeCohere(cohere_prefers("Fridays"))
    claude = FakeClaude(lambda body: httpx2.Response(500, json={"type": "error", "error": {"type": "api_error"}}))
    srv = service(settings, scorer=claude.scorer(), reranker=cohere.reranker())
    srv.index("acme", DEPLOY_NOTES)
    reply = srv.search("acme", request(rerank="thorough", llm_filter=False, top_k=3), "r")
    assert reply.degraded == ["rerank:thorough->balanced (LLM rerank failed (error))"]
    assert reply.results[0].id == "d6" and reply.rerank.provider == "cohere"
    # Cohere was asked once (for 2 x topK), its order cut to topK; the LLM once
    assert len(cohere.requests) == 1 and len(claude.requests) == 1 and len(reply.results) <= 3


def test_an_llm_that_failed_at_the_gate_is_not_called_again_to_rerank(settings: Settings) -> None:
    cohere = FakeCohere(cohere_prefers("Fridays"))
    claude = FakeClaude(lambda body: httpx2.Response(529, json={"type": "error", "error": {"type": "overloaded"}}))
    srv = service(settings, scorer=claude.scorer(), reranker=cohere.reranker())
    srv.index("acme", DEPLOY_NOTES)
    reply = srv.search("acme", request(rerank="thorough"), "r")
    assert (reply.llm.bypassed, reply.llm.reason) == (True, "error")
    assert reply.degraded == ["rerank:thorough->balanced (the LLM already failed in this search (error))"]
    assert len(claude.requests) == 1 and len(cohere.requests) == 1


def test_the_gate_s_scores_serve_the_llm_rerank_without_a_second_call(settings: Settings) -> None:
    cohere = FakeCohere(cohere_prefers("deploy"))
    claude = FakeClaude(score_by_title("fail|rollback", hit=0.8, miss=0.5))
    srv = service(settings, scorer=claude.scorer(), reranker=cohere.reranker())
    srv.index("acme", DEPLOY_NOTES)
    reply = srv.search("acme", request(rerank="thorough"), "r")
    assert reply.llm.bypassed is False and reply.rerank.provider == "cohere+llm"
    assert len(claude.requests) == 1 and len(cohere.requests) == 1
    assert {r.id for r in reply.results[:2]} == {"d1", "d2"}


def test_nothing_configured_degrades_all_the_way_to_fast(settings: Settings) -> None:
    srv = service(settings)
    srv.index("acme", DEPLOY_NOTES)
    reply = srv.search("acme", request(rerank="thorough", llm_filter=False), "r")
    assert reply.degraded == ["rerank:thorough->fast (Cohere not configured; no LLM configured)"]
    assert reply.rerank.provider is None


def test_diversity_after_a_rerank_picks_from_more_than_the_top_k(settings: Settings) -> None:
    # Given Cohere preferring the note about Fridays, all others alike
    cohere = FakeCohere(cohere_prefers("Fridays"))
    srv = service(settings, reranker=cohere.reranker())
    srv.index("acme", DEPLOY_NOTES)
    # When two results are asked for with diversity
    plain = srv.search("acme", request(rerank="balanced", llm_filter=False, top_k=2, rerank_min_score=0.0), "r")
    varied = srv.search(
        "acme", request(rerank="balanced", llm_filter=False, top_k=2, rerank_min_score=0.0, diversity=0.9), "r"
    )
    # Then Cohere ranked every candidate, not just two, and MMR kept the best and one unlike it
    assert cohere.requests[0]["top_n"] == 2
    assert cohere.requests[1]["top_n"] == len(cohere.requests[1]["documents"]) > 2
    assert varied.results[0].id == plain.results[0].id
    assert varied.results[1].id != plain.results[1].id
