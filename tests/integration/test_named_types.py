"""A query that names an observation type lifts that type to the largest tier boost, and equal
scores put the newer observation first, on both stores."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.models import SearchRequest

from tests.helpers.pipeline import NOW, note
from tests.helpers.two_stores import svc  # noqa: F401 - the two-store fixture

if TYPE_CHECKING:
    from neural_memory.models import SearchResult
    from neural_memory.service import Service

pytestmark = pytest.mark.integration

CHANGE = "Cap waitlist offers at three per patient"


def _search(service: Service, query: str, **fields: Any) -> list[SearchResult]:
    body = {"query": query, "topK": 10, "mode": "keyword", "llmFilter": False, "explain": True}
    body |= {"collapseDuplicates": False, **fields}
    return service.search("acme", SearchRequest.model_validate(body), "r").results


def test_naming_a_push_lifts_it_to_the_design_notes_boost(svc: Service) -> None:  # noqa: F811
    # Given a design note (A, boost 1.5) and a push (E, boost 1.0) with the same words, the push
    # newer (compared, so not collapsed as copies)
    svc.index(
        "acme",
        [
            note("design", "Waitlist offers", CHANGE, observation_type="design_note", occurred_at=NOW - timedelta(3)),
            note("push", "Waitlist offers", CHANGE, observation_type="push", occurred_at=NOW - timedelta(1)),
        ],
    )
    # When the query names no type, Then the tier prior holds: the push scores 1.0 / 1.5 of the note
    plain = _search(svc, "capped waitlist offers")
    assert [r.id for r in plain] == ["design", "push"]
    assert plain[1].score == pytest.approx(plain[0].score / 1.5, abs=1e-3)
    # When it names a push ("commit" too), Then the push is boosted as A is: equal scores, the newer first
    for query in ("the push that capped waitlist offers", "commit that capped waitlist offers"):
        named = _search(svc, query)
        assert [r.id for r in named] == ["push", "design"]
        assert named[0].score == pytest.approx(named[1].score, abs=1e-4)
        tier_notes = [(r.explain or [])[3].note or "" for r in named]  # the recencyAndTier stage's
        assert "type named by the query" in tier_notes[0] and "type named by the query" not in tier_notes[1]


def test_a_deploy_question_prefers_the_deployment_and_its_outcome(svc: Service) -> None:  # noqa: F811
    # Given a push and the deployment of its commit (started, then succeeded), all with the same
    # words; ids in the order a tie used to fall back on
    line = "Commit 800dfb5 on main: Waitlist on the public booking page"
    svc.index(
        "acme",
        [
            note("a-push", "Push to main", line, observation_type="push", occurred_at=NOW - timedelta(hours=3)),
            note("b-started", "Deployment started: web", line, observation_type="deployment_created",
                 occurred_at=NOW - timedelta(hours=2)),
            note("c-succeeded", "Deployment succeeded: web", line, observation_type="deployment_succeeded",
                 occurred_at=NOW - timedelta(hours=1)),
        ],
    )  # fmt: skip
    # When asking for the deploy among execution events
    results = _search(svc, "deploy of the waitlist on the booking page", filters={"tiers": ["E"]})
    # Then the deployment comes before the push, and its outcome (newer, the same score) before its start
    assert [r.id for r in results] == ["c-succeeded", "b-started", "a-push"]
    assert results[0].score == pytest.approx(results[1].score, abs=1e-6)
    assert results[2].score == pytest.approx(results[0].score / 1.5, abs=1e-3)
    # And a question that names no type keeps the three level, the newest first
    plain = _search(svc, "waitlist on the booking page", filters={"tiers": ["E"]})
    assert [r.id for r in plain] == ["c-succeeded", "b-started", "a-push"]
    assert plain[0].score == pytest.approx(plain[2].score, abs=1e-6)


def test_a_when_question_puts_a_change_first_only_when_it_answers_as_well(svc: Service) -> None:  # noqa: F811
    # Given a note on when flags are cleaned up, and two merged PRs: one that started it, one that
    # only shares a word with the question
    svc.index(
        "acme",
        [
            note("flags-note", "Flag hygiene", "Feature flags are cleaned up every Friday by the on-call engineer."),
            note("pr-flags", "Clean up stale feature flags every Friday", "Adds the Friday feature flags clean up job.",
                 observation_type="pull_request_merged", occurred_at=NOW - timedelta(40)),
            note("pr-other", "Move session refresh into edge middleware", "Session refresh started racing on Friday.",
                 observation_type="pull_request_merged", occurred_at=NOW - timedelta(10)),
        ],
    )  # fmt: skip
    # When asked when it started, Then the PR that started it is first
    started = _search(svc, "When did we start cleaning up feature flags every Friday?")
    assert started[0].id == "pr-flags"
    # When the only change is the unrelated PR, Then the note that answers stays first
    svc.delete("acme", "pr-flags", "r")
    unrelated = _search(svc, "When did we start cleaning up feature flags every Friday?")
    assert unrelated[0].id == "flags-note"
    # And a question about a schedule is no question about a change: searched as written
    assert _search(svc, "when are feature flags cleaned up")[0].id == "flags-note"
