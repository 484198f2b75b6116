"""Who knows about a subject (``/v1/experts``), on both stores: the sample events' deploy failure,
the type weights, recency, bots, filters, tenancy, and the routes (GET and POST) through the local
gateway with their 400s naming the field."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.auth.keys import issue_key
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.clock import utcnow
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.models import ExpertsRequest, ExpertsResponse
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.fakes import HashEmbedder
from tests.helpers.pipeline import NOW, note
from tests.integration.test_lineage import samples

if TYPE_CHECKING:
    from collections.abc import Iterator

    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration


def _experts(svc: Service, workspace: str, query: str, **fields: Any) -> ExpertsResponse:
    return svc.experts(workspace, ExpertsRequest.model_validate({"query": query, **fields}), "r")


def test_on_the_samples_the_author_of_the_fix_comes_first(svc: Service) -> None:
    # Given the sample events (octocat wrote down why the deploy failed and pushed the fix)
    svc.index("acme", samples())
    # When who knows about the deploy failure is asked
    reply = _experts(svc, "acme", "deploy failure")
    # Then octocat comes first, with the note that explains the failure among the evidence
    first = reply.experts[0]
    assert first.actor_name == "octocat" and first.score == 1.0
    assert "note-deploy-env-vars" in [e.id for e in first.evidence] and len(first.evidence) <= 3
    assert sum(first.counts.values()) == first.observations
    scores = [e.score for e in reply.experts]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)
    # And no bot, however active, is an expert
    assert not any(e.actor_name.endswith("[bot]") for e in reply.experts)
    assert reply.candidates >= sum(e.observations for e in reply.experts)
    assert reply.weights["decision"] > reply.weights["push"] and reply.half_life_days == 730.0


def test_a_decision_outweighs_pushes_and_age_lowers_but_never_erases(svc: Service) -> None:
    text = "Cache invalidation for the pricing service happens on every deploy."
    hour = timedelta(hours=1)
    svc.index(
        "acme",
        [
            note("d1", "Cache invalidation decision", text, observation_type="decision", actor_name="alice"),
            *[note(f"p{n}", "Cache invalidation decision", text, observation_type="push", actor_name="bob",
                   occurred_at=NOW - n * hour) for n in range(1, 4)],
            note("old", "Cache invalidation decision", text, observation_type="decision", actor_name="carol",
                 occurred_at=NOW - timedelta(days=400)),
        ],
    )  # fmt: skip
    reply = _experts(svc, "acme", "cache invalidation pricing deploy", mode="keyword")
    # A decision made 400 days ago counts less than the same decision today, and still more than
    # three pushes: ownership fades by at most half (RECENCY_SHARE)
    assert [e.actor_name for e in reply.experts] == ["alice", "carol", "bob"]
    assert 0.5 * reply.experts[0].score < reply.experts[1].score < reply.experts[0].score
    assert reply.experts[2].counts == {"push": 3} and [e.id for e in reply.experts[2].evidence] == ["p1", "p2", "p3"]
    # And topK and evidence cut the reply
    cut = _experts(svc, "acme", "cache invalidation pricing deploy", mode="keyword", topK=1, evidence=1)
    assert [e.actor_name for e in cut.experts] == ["alice"] and len(cut.experts[0].evidence) == 1


def test_bots_and_agents_are_no_experts_unless_asked_and_reviews_count(svc: Service) -> None:
    text = "Retry budget for the payments webhook handler."
    svc.index(
        "acme",
        [
            note("bot-1", "Retry budget bump", text, observation_type="push", actor_name="renovate[bot]"),
            note("bot-2", "Retry budget", text, observation_type="push", actor_name="ci", metadata={"bot": True}),
            note("turn-1", "Retry budget", text, observation_type="conversation_turn", source="agent",
                 actor_name="support-bot"),
            note("pr-1", "Retry budget for payments", text, observation_type="pull_request_merged", actor_name="dana",
                 metadata={"reviewers": ["erin"], "mergedBy": "frank"}),
            # An agent recording a person's decision: the person is the actor, not the agent
            note("adr-1", "Retry budget decision", text, observation_type="decision", source="agent",
                 actor_name="gus"),
        ],
    )  # fmt: skip
    names = [e.actor_name for e in _experts(svc, "acme", "retry budget payments webhook", topK=10).experts]
    assert set(names) == {"dana", "erin", "frank", "gus"}
    everyone = _experts(
        svc, "acme", "retry budget payments", topK=10, includeBots=True, includeAgents=True, explain=True
    )
    kinds = {e.actor_name: e.kind for e in everyone.experts}
    assert kinds["renovate[bot]"] == kinds["ci"] == "bot" and kinds["support-bot"] == "agent"
    assert kinds["dana"] == kinds["erin"] == "human"
    erin = next(e for e in everyone.experts if e.actor_name == "erin")
    assert [(x.id, x.role) for x in erin.evidence] == [("pr-1", "reviewer")]
    assert all(e.why and e.why.startswith(f"#{n}: ") for n, e in enumerate(everyone.experts, 1))
    assert _experts(svc, "acme", "retry budget").experts[0].why is None


def test_recency_counts_from_the_workspaces_newest_observation_and_never_erases_ownership(svc: Service) -> None:
    # Given a history that ended two years ago: the owner of a module over years, and one newcomer
    # whose single change came last
    end = NOW - timedelta(days=730)
    text = "Cookie parsing in the http module."
    owner = [note(f"o{n}", f"Cookie parsing fix {n}", text, observation_type="push", actor_name="olga",
                  occurred_at=end - timedelta(days=60 * n)) for n in range(1, 9)]  # fmt: skip
    late = note("n1", "Cookie parsing fix", text, observation_type="push", actor_name="nina", occurred_at=end)
    svc.index("acme", [*owner, late])
    reply = _experts(svc, "acme", "cookie parsing", mode="keyword")
    # Then the owner ranks first, and the newcomer's change is not aged by the two years since
    assert [e.actor_name for e in reply.experts] == ["olga", "nina"]
    assert reply.experts[1].evidence[0].contribution > 0.9 * max(x.contribution for x in reply.experts[0].evidence)


def test_filters_narrow_and_workspaces_never_mix(svc: Service) -> None:
    svc.index("acme", samples())
    svc.index("rival", [note("r1", "Deploy failure runbook", "Deploy failure: roll back.", actor_name="mallory",
                             observation_type="decision")])  # fmt: skip
    only_vercel = _experts(svc, "acme", "deployment failed", filters={"sourceTypes": ["vercel"]})
    assert [e.actor_name for e in only_vercel.experts] == ["octocat"]
    assert set(only_vercel.experts[0].counts) <= {"deployment_created", "deployment_error", "deployment_canceled",
                                                  "deployment_succeeded"}  # fmt: skip
    assert "mallory" not in [e.actor_name for e in _experts(svc, "acme", "deploy failure").experts]
    assert [e.actor_name for e in _experts(svc, "rival", "deploy failure").experts] == ["mallory"]
    assert _experts(svc, "nobody", "deploy failure").experts == []


@pytest.fixture
def gateway(settings: Settings) -> Iterator[tuple[LocalGateway, str]]:
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, HashEmbedder(), settings, clock=lambda: NOW)
    service.index("acme", samples())
    set_service(service)
    keys = SqliteKeyStore(settings.sqlite_path)
    yield LocalGateway(keys), issue_key(keys, "acme", utcnow())
    set_service(None)
    store.close()


def test_get_and_post_answer_alike_and_name_a_bad_field(gateway: tuple[LocalGateway, str]) -> None:
    local, key = gateway

    def send(method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = b"" if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        reply = local.dispatch(method, path, headers, data)
        return reply.status, json.loads(reply.body)

    status, by_get = send("GET", "/v1/experts?q=deploy+failure&sourceTypes=vercel&sourceTypes=manual&topK=3")
    assert status == 200 and by_get["experts"][0]["actorName"] == "octocat"
    body = {"query": "deploy failure", "filters": {"sourceTypes": ["vercel", "manual"]}, "topK": 3}
    status, by_post = send("POST", "/v1/experts", body)
    assert status == 200 and by_post["experts"] == by_get["experts"]
    # fresh leaves out what a later push made stale: hubot's decision about the middleware
    middleware = "/v1/experts?q=refresh+sessions+edge+middleware&mode=keyword&observationTypes=decision"
    assert [e["actorName"] for e in send("GET", middleware)[1]["experts"]] == ["hubot"]
    assert send("GET", middleware + "&fresh=true")[1]["experts"] == []
    status, fresh = send("POST", "/v1/experts", {"query": "refresh sessions edge middleware", "filters": {"fresh": True,
                         "observationTypes": ["decision"]}, "mode": "keyword"})  # fmt: skip
    assert (status, fresh["experts"]) == (200, [])
    for path, field in [
        ("/v1/experts", "q"),
        ("/v1/experts?q=%20%20", "q"),
        ("/v1/experts?q=deploy&topK=0", "topK"),
        ("/v1/experts?q=deploy&start=2025-12-10T00:00:00Z&end=2025-12-01T00:00:00Z", "start"),
    ]:
        status, refused = send("GET", path)
        assert (status, refused["error"]["details"][0]["field"]) == (400, field), path
    status, refused = send("POST", "/v1/experts", {"query": "deploy", "evidence": 11})
    assert (status, refused["error"]["details"][0]["field"]) == (400, "evidence")


def test_asked_as_a_question_the_experts_are_those_of_its_subject(svc: Service) -> None:
    # Given two people who worked on websockets, and a release note whose words are the question's frame
    svc.index(
        "acme",
        [
            note("w1", "Websocket ping timeouts", "Close websockets whose pings go unanswered.",
                 observation_type="pull_request_merged", actor_name="alice"),
            note("w2", "Websocket compression", "Negotiate permessage-deflate on websockets.",
                 observation_type="pull_request_merged", actor_name="bob"),
            note("w3", "Websocket close codes", "Send 1011 on server errors in websockets.",
                 observation_type="push", actor_name="bob"),
            note("n1", "Who knows about the release?", "Add notes about 0.34.3 and analytics: who knows, about time.",
                 observation_type="note", actor_name="carol"),
        ],
    )  # fmt: skip
    # When who knows is asked as people ask it, and by its bare subject
    asked = _experts(svc, "acme", "Who knows about websockets?")
    bare = _experts(svc, "acme", "websockets")
    # Then the question finds the subject's people and evidence, exactly as the subject does
    assert [e.actor_name for e in asked.experts] == [e.actor_name for e in bare.experts] == ["bob", "alice"]
    assert {e.id for expert in asked.experts for e in expert.evidence} == {"w1", "w2", "w3"}


def test_asked_who_knows_it_lately_the_ranking_keeps_to_the_last_year_of_the_history(svc: Service) -> None:
    # Given a history that ended 400 days ago: the module's owner until two years before its end,
    # and a newcomer who worked on it in its last months
    end = NOW - timedelta(days=400)
    text = "Cookie parsing in the http module."
    owner = [note(f"o{n}", f"Cookie parsing fix {n}", text, observation_type="push", actor_name="olga",
                  occurred_at=end - timedelta(days=420 + 30 * n)) for n in range(8)]  # fmt: skip
    newcomer = [note(f"n{n}", f"Cookie parsing change {n}", text, observation_type="push", actor_name="nina",
                     occurred_at=end - timedelta(days=50 * n)) for n in range(2)]  # fmt: skip
    svc.index("acme", [*owner, *newcomer])
    # When who knows it is asked, and who knows it lately (or currently, or these days)
    ever = _experts(svc, "acme", "who knows cookie parsing?")
    lately = [
        _experts(svc, "acme", q) for q in ("who knows cookie parsing lately?", "Who currently owns cookie parsing")
    ]
    # Then the owner comes first over the whole history; lately, over the history's last year, the newcomer alone
    assert [e.actor_name for e in ever.experts] == ["olga", "nina"] and ever.period is None
    for reply in lately:
        assert [e.actor_name for e in reply.experts] == ["nina"]
        assert reply.period is not None and reply.period.start == end - timedelta(days=365) and reply.period.end is None
    # A time phrase is read as a search's autoFilters read it (the past 6 months before now: nobody)
    recent = _experts(svc, "acme", "who worked on cookie parsing in the past 6 months")
    assert recent.experts == [] and recent.period is not None and recent.period.start is not None
    assert recent.period.start.date() == (NOW - timedelta(days=180)).date()
    # Dates the request bounds itself are what is asked: no period is read from the words
    bounded = _experts(
        svc, "acme", "who knows cookie parsing lately", filters={"dateRange": {"start": "2020-01-01T00:00:00Z"}}
    )
    assert [e.actor_name for e in bounded.experts] == ["olga", "nina"] and bounded.period is None


def test_asked_lately_about_what_nobody_worked_on_lately_the_whole_history_answers_and_says_so(svc: Service) -> None:
    # Given a module nobody has touched in the history's last year, and other work that year
    end = NOW - timedelta(days=30)
    old = [note(f"x{n}", f"XML parser fix {n}", "The XML parser of the importer.", observation_type="push",
                actor_name="olga", occurred_at=end - timedelta(days=500 + 10 * n)) for n in range(3)]  # fmt: skip
    svc.index("acme", [*old, note("y1", "Billing retries", "Retry billing twice.", actor_name="nina", occurred_at=end)])
    # When who knows it lately is asked
    reply = _experts(svc, "acme", "who knows the xml parser lately?")
    # Then rather than nobody, who knows it over the whole history, and the reply says why
    assert [e.actor_name for e in reply.experts] == ["olga"] and reply.period is None
    assert any(d.startswith("period:lately->whole history (nobody since ") for d in reply.degraded)
