"""Pipeline behaviour on the store, through the service: tiers, TTL and purge, recency, tier boosts,
chunking with one result per parent, session exclusion in the query, and the similarity threshold."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from neural_memory.domain.filters import Filter
from neural_memory.stores.base import read_one
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.pipeline import NOW, note, request, service

if TYPE_CHECKING:
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration


def test_tiers_ttl_and_purge(settings: Settings) -> None:
    # Given an architectural note, an old and a fresh PR (collaborative), and an old push (execution)
    svc = service(settings)
    old = NOW - timedelta(days=8)
    svc.index(
        "acme",
        [
            note("adr", "deploy decision", "We deploy with blue-green.", occurred_at=old),
            note(
                "pr-old", "deploy PR opened", "Old deploy PR.", observation_type="pull_request_opened", occurred_at=old
            ),
            note("pr-new", "deploy PR opened", "New deploy PR.", observation_type="pull_request_opened"),
            note("push", "deploy push", "Pushed deploy script.", observation_type="push", occurred_at=old),
        ],
    )
    # When searching in every mode
    hybrid = {r.id: r for r in svc.search("acme", request("deploy", llm_filter=False), "r").results}
    semantic = {r.id for r in svc.search("acme", request("deploy", mode="semantic"), "r").results}
    # Then the PR past its window is found by its words but never by vector (it was written without
    # vectors), E the same way, A and fresh C both ways
    assert set(hybrid) == {"adr", "pr-new", "push", "pr-old"}
    assert "push" not in semantic and "pr-old" not in semantic and {"adr", "pr-new"} <= semantic
    assert hybrid["push"].tier == "E" and hybrid["push"].scores.vector is None
    assert hybrid["pr-old"].tier == "C" and hybrid["pr-old"].scores.vector is None
    assert svc.get("acme", "pr-old", "r").expires_at == old + timedelta(days=7)
    assert svc.get("acme", "adr", "r").expires_at is None
    # When the maintenance runs, Then nothing is purged: nothing held vectors it should not
    assert svc.maintain(NOW) == {"purged": 0, "archived": 0, "unembedded": 0}
    assert svc.store.count("acme") == 4


def test_a_collaborative_observation_loses_its_vectors_at_the_end_of_its_window(settings: Settings) -> None:
    # Given a PR written while in its window (embedded), then the clock past it
    clock = [NOW - timedelta(days=8)]
    svc = service(settings, clock=lambda: clock[0])
    merged = note("pr", "deploy PR opened", "Deploy PR.", observation_type="pull_request_opened", occurred_at=clock[0])
    svc.index("acme", [merged, note("adr", "deploy decision", "We deploy with blue-green.", occurred_at=clock[0])])
    assert "pr" in {r.id for r in svc.search("acme", request("deploy", mode="semantic"), "r").results}
    clock[0] = NOW
    # When the daily maintenance runs, Then it drops the PR's vectors once and keeps the PR
    assert svc.maintain(NOW)["unembedded"] == 1
    assert svc.maintain(NOW)["unembedded"] == 0
    assert "pr" not in {r.id for r in svc.search("acme", request("deploy", mode="semantic"), "r").results}
    hybrid = {r.id: r for r in svc.search("acme", request("deploy", llm_filter=False), "r").results}
    assert hybrid["pr"].scores.vector is None and hybrid["pr"].scores.lexical is not None
    assert svc.lineage("acme", "pr", 10, "r").id == "pr"


def test_under_the_delete_rule_a_collaborative_observation_goes_at_the_end_of_its_window(settings: Settings) -> None:
    svc = service(settings.model_copy(update={"collaborative_after_window": "delete"}))
    old = NOW - timedelta(days=8)
    svc.index(
        "acme",
        [
            note("adr", "deploy decision", "We deploy with blue-green.", occurred_at=old),
            note(
                "pr-old", "deploy PR opened", "Old deploy PR.", observation_type="pull_request_opened", occurred_at=old
            ),
            note("push", "deploy push", "Pushed deploy script.", observation_type="push", occurred_at=old),
        ],
    )
    assert {r.id for r in svc.search("acme", request("deploy", llm_filter=False), "r").results} == {"adr", "push"}
    # When the maintenance runs, Then only the expired record is deleted
    assert svc.maintain(NOW)["purged"] == 1
    assert read_one(svc.store, "acme", "pr-old") is None and svc.store.count("acme") == 2


def test_recency_favours_the_newer_collaborative_observation(settings: Settings) -> None:
    svc = service(settings)
    text = "deploy failed because the env var was missing"
    svc.index(
        "acme",
        [
            note(
                "new", "incident chat", text, observation_type="conversation_turn", occurred_at=NOW - timedelta(days=1)
            ),
            note(
                "old", "incident chat", text, observation_type="conversation_turn", occurred_at=NOW - timedelta(days=6)
            ),
        ],
    )
    # (the same text twice: kept apart, not collapsed, to compare their recency)
    results = svc.search("acme", request("deploy env var", llm_filter=False, collapse_duplicates=False), "r").results
    assert [r.id for r in results] == ["new", "old"]
    assert results[0].scores.recency == pytest.approx(0.5 ** (1 / 3.5), abs=1e-4)
    assert results[1].scores.recency == pytest.approx(0.5 ** (6 / 3.5), abs=1e-4)


def test_tier_boosts_and_final_stays_in_range(settings: Settings) -> None:
    # Given the same words in an architectural note and a collaborative chat 3.5 days old
    svc = service(settings)
    svc.index(
        "acme",
        [
            note("a", "billing locks", "advisory lock billing job"),
            note(
                "c",
                "billing locks",
                "advisory lock billing job",
                observation_type="conversation_turn",
                occurred_at=NOW - timedelta(days=3.5),
            ),
        ],
    )
    same_text = request("advisory lock billing", mode="keyword", collapse_duplicates=False)  # compared, not collapsed
    results = {r.id: r for r in svc.search("acme", same_text, "r").results}
    # Then A keeps its fused score (boost 1.5 / 1.5), C gets (0.7 fused + 0.3 * 0.5) * 1.2 / 1.5
    assert results["a"].score == pytest.approx(results["a"].scores.fused or 0, abs=1e-4)
    expected_c = (0.7 * (results["c"].scores.fused or 0) + 0.3 * 0.5) * 1.2 / 1.5
    assert results["c"].score == pytest.approx(expected_c, abs=1e-3)
    assert all(0 <= r.score <= 1 for r in results.values())


def test_long_content_is_chunked_and_search_returns_the_parent_once(settings: Settings) -> None:
    # Given a long runbook whose last section alone mentions "kerberos"
    body = " ".join(f"Step {i}: restart the worker and check the queue depth." for i in range(120))
    svc = service(settings)
    svc.index("acme", [note("runbook", "worker runbook", body + " Finally renew the kerberos ticket.")])
    store = svc.store
    assert isinstance(store, SqliteStore)
    # Then it was cut into several chunks, each searchable
    chunks = store._reader().conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert chunks > 3
    # When searching for a word of the last chunk, Then one result per parent, its snippet from there
    results = svc.search("acme", request("kerberos ticket", llm_filter=False), "r").results
    assert [r.id for r in results] == ["runbook"]
    assert "kerberos" in results[0].snippet
    # And the parent's full text is whole
    assert svc.get("acme", "runbook", "r").content.endswith("kerberos ticket.")


def test_session_exclusion_happens_in_the_store_query(settings: Settings) -> None:
    # Given the best match in the caller's own session, and a weaker one elsewhere
    svc = service(settings)
    svc.index(
        "acme",
        [
            note("mine", "deploy failed deploy failed", "deploy failed", session_id="sess-42"),
            note("other", "deploy notes", "the deploy failed once", session_id="sess-7"),
        ],
    )
    store_hits = svc.store.retrieve(
        "acme", text="deploy failed", vector=None, model_id=None,
        flt=Filter(live_at=NOW, exclude_session_id="sess-42"), limit=1,
    )  # fmt: skip
    # Then even with room for one hit, the store returns the other session's (not 0 after a post-filter)
    assert [h.observation.id for h in store_hits.lexical] == ["other"]
    results = svc.search("acme", request("deploy failed", exclude_session_id="sess-42", top_k=1), "r").results
    assert [r.id for r in results] == ["other"]


def test_similarity_threshold_drops_and_counts(settings: Settings) -> None:
    # Given a threshold of 0.5 for the test embedder's model
    strict = settings.model_copy(update={"min_similarity": {"test-hash-64": 0.5}})
    svc = service(strict)
    svc.index("acme", [note("close", "deploy failed", "deploy failed"), note("far", "lunch menu", "tacos")])
    # When searching semantically for something close to one of them
    reply = svc.search("acme", request("deploy failed", mode="semantic"), "r")
    # Then only hits at or above the threshold remain, and the reply counts the rest
    assert [r.id for r in reply.results] == ["close"]
    # (hits are passages: the far note's text and its title's)
    assert reply.threshold.min_similarity == 0.5 and reply.threshold.dropped == 2
