"""autoFilters on both stores: a time phrase becomes a date range, the reply says what was applied
and what was searched, and too few results fall back to the query as written."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from neural_memory.clock import to_iso
from neural_memory.models import ObservationIn, SearchRequest
from neural_memory.search.filters.inference import known_values

from tests.helpers.pipeline import NOW, FakeClaude, claude_reply, note, service
from tests.helpers.two_stores import svc  # noqa: F401  (the two-store fixture)

if TYPE_CHECKING:
    from collections.abc import Callable

    from neural_memory.models import SearchResponse
    from neural_memory.service import Service
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration
WS = "acme"


def _deploys(service: Service) -> None:
    """Three deploy notes in the last three days, two more a month ago."""
    days = [1, 2, 3, 30, 31]
    service.index(WS, [note(f"d{d}", f"deploy notes day {d}", occurred_at=NOW - timedelta(days=d)) for d in days])


def _search(service: Service, query: str, top_k: int, **extra: Any) -> SearchResponse:
    body = {"query": query, "topK": top_k, "mode": "keyword", "llmFilter": False, "autoFilters": True, **extra}
    return service.search(WS, SearchRequest.model_validate(body), "r")


def test_a_time_phrase_becomes_a_date_range(svc: Service) -> None:  # noqa: F811
    # Given deploy notes of this week and of last month
    _deploys(svc)
    # When searching "deploy notes in the last 7 days" for at most 3
    reply = _search(svc, "deploy notes in the last 7 days", 3)
    # Then only the recent ones come back, and the reply shows what was applied and searched
    assert {r.id for r in reply.results} == {"d1", "d2", "d3"}
    status = reply.auto_filters
    assert status is not None and not status.fell_back
    assert status.phrases == ["in the last 7 days"] and status.query == "deploy notes"
    assert status.applied_filters is not None and status.applied_filters.date_range is not None
    assert status.applied_filters.date_range.start == NOW - timedelta(days=7)
    assert not any(d.startswith("autoFilters") for d in reply.degraded)


def test_too_few_results_fall_back_to_the_query_as_written(svc: Service) -> None:  # noqa: F811
    # Given only three deploy notes in the last week
    _deploys(svc)
    # When five are asked for within the last 7 days
    reply = _search(svc, "deploy notes in the last 7 days", 5)
    # Then the search runs as written, says so, and returns all five
    assert len(reply.results) == 5
    assert reply.auto_filters is not None and reply.auto_filters.fell_back
    assert reply.auto_filters.query == "deploy notes in the last 7 days"
    assert "autoFilters:fallback (3 of 5 results within 'in the last 7 days')" in reply.degraded


def test_without_a_phrase_or_when_off_nothing_is_inferred(svc: Service) -> None:  # noqa: F811
    _deploys(svc)
    reply = _search(svc, "deploy notes", 5)
    assert reply.auto_filters is not None and reply.auto_filters.applied_filters is None
    assert len(reply.results) == 5
    plain = svc.search(WS, SearchRequest.model_validate({"query": "deploy notes last week", "mode": "keyword"}), "r")
    assert plain.auto_filters is None


# ----------------------------------------------------------------------------- with the LLM

TEAM = [
    ("p1", "github", "push", "alice", 2, "login redirect fixed"),
    ("p2", "github", "push", "bob", 2, "login page styles"),
    ("p3", "github", "push", "alice", 20, "login tokens rotated"),
    ("d1", "vercel", "deployment_error", "alice", 1, "login service deploy failed"),
]


def _team(service: Service) -> None:
    service.index(
        WS,
        [
            ObservationIn.model_validate(
                {"id": i, "source": src, "observationType": kind, "actorName": actor, "tier": "A",
                 "occurredAt": to_iso(NOW - timedelta(days=days)), "title": title}
            )
            for i, src, kind, actor, days, title in TEAM
        ],
    )  # fmt: skip


def _filters_reply(**tool_input: Any) -> Callable[[dict[str, Any]], httpx2.Response]:
    def respond(body: dict[str, Any]) -> httpx2.Response:
        block = {"type": "tool_use", "id": "toolu_01", "name": "apply_filters", "input": tool_input}
        return httpx2.Response(200, json=claude_reply(content=[block]))

    return respond


def test_the_llm_infers_actor_type_and_dates_from_the_workspace_values(settings: Settings) -> None:
    # Given pushes by alice and bob, recent and older, and an LLM that reads the query
    last_week = {"start": to_iso(NOW - timedelta(days=7)), "end": to_iso(NOW)}
    claude = FakeClaude(
        _filters_reply(query="login", actorNames=["alice"], observationTypes=["push"], dateRange=last_week)
    )
    memory = service(settings, proposer=claude.proposer())
    _team(memory)
    # When searching "what did alice push last week" with autoFilters
    reply = _search(memory, "what did alice push last week", 1)
    # Then only alice's recent push comes back, and the reply shows what the LLM applied
    assert [r.id for r in reply.results] == ["p1"]
    status = reply.auto_filters
    assert status is not None and status.by == "llm" and status.query == "login" and not status.fell_back
    assert status.applied_filters is not None
    assert status.applied_filters.actor_names == ["alice"] and status.applied_filters.observation_types == ["push"]
    # And the tool offered exactly the workspace's values, as enums, with no temperature sent
    (sent,) = claude.requests
    properties = sent["tools"][0]["input_schema"]["properties"]
    assert set(properties["actorNames"]["items"]["enum"]) == {"alice", "bob"}
    assert set(properties["observationTypes"]["items"]["enum"]) == {"push", "deployment_error"}
    assert set(properties["sourceTypes"]["items"]["enum"]) == {"github", "vercel"}
    assert sent["tool_choice"] == {"type": "tool", "name": "apply_filters"} and "temperature" not in sent


def test_an_actor_the_workspace_does_not_hold_is_never_searched(settings: Settings) -> None:
    # Given an LLM that answers with an actor nobody in the workspace is (and a real one)
    claude = FakeClaude(_filters_reply(query="login", actorNames=["mallory", "bob"]))
    memory = service(settings, proposer=claude.proposer())
    _team(memory)
    reply = _search(memory, "what did mallory and bob do on login", 1)
    # Then the invented actor is dropped and only the real one filters
    assert reply.auto_filters is not None and reply.auto_filters.applied_filters is not None
    assert reply.auto_filters.applied_filters.actor_names == ["bob"]
    assert [r.id for r in reply.results] == ["p2"]


def _timeout(body: dict[str, Any]) -> httpx2.Response:
    raise httpx2.ReadTimeout("timed out")


@pytest.mark.parametrize(
    ("respond", "reason"),
    [
        (lambda body: httpx2.Response(429, json={"type": "error", "error": {"type": "rate_limit_error"}}), "error"),
        (lambda body: httpx2.Response(500, json={"type": "error", "error": {"type": "api_error"}}), "error"),
        (_timeout, "timeout"),
        (lambda body: httpx2.Response(200, text="<html>oops</html>"), "error"),
        (lambda body: httpx2.Response(200, json=claude_reply(content=[{"type": "text", "text": "hi"}])), "error"),
        (_filters_reply(actorNames=["alice"]), "error"),  # no query
        (_filters_reply(query="login", dateRange={"start": "last tuesday"}), "error"),
    ],
    ids=["429", "500", "timeout", "not json", "no tool call", "no query left", "a date that is not one"],
)
def test_a_failing_llm_falls_back_to_time_phrases_and_says_so(
    settings: Settings, respond: Callable[[dict[str, Any]], httpx2.Response], reason: str
) -> None:
    # Given an LLM that fails in one way
    memory = service(settings, proposer=FakeClaude(respond).proposer())
    _team(memory)
    # When searching with a time phrase
    reply = _search(memory, "login in the last 7 days", 2)
    # Then the offline rules still apply the date range, and degraded names the failure
    assert reply.auto_filters is not None and reply.auto_filters.by == "rules"
    assert reply.auto_filters.phrases == ["in the last 7 days"]
    assert not reply.auto_filters.fell_back and {r.id for r in reply.results} <= {"p1", "p2", "d1"}
    assert any(d.startswith(f"autoFilters:llm {reason} (") for d in reply.degraded), reply.degraded


def test_known_values_come_from_the_workspace_alone(svc: Service) -> None:  # noqa: F811
    # Given the team's observations in one workspace and one more actor in another
    _team(svc)
    svc.index("other", [note("x", "elsewhere", actor_name="eve")])
    # When the workspace's values are read, Then they are its own, the most frequent first
    values = known_values(svc.store, WS, 10)
    assert values["actor_name"] == ["alice", "bob"]
    assert values["observation_type"] == ["push", "deployment_error"]
    assert values["source"] == ["github", "vercel"]
    assert known_values(svc.store, WS, 1)["actor_name"] == ["alice"]


def test_too_few_results_with_the_llms_filters_fall_back_too(settings: Settings) -> None:
    # Given an LLM that narrows to bob, who has one observation, and three results asked for
    memory = service(settings, proposer=FakeClaude(_filters_reply(query="login", actorNames=["bob"])).proposer())
    _team(memory)
    reply = _search(memory, "bob login", 3)
    # Then the search runs as written and names the fallback
    assert len(reply.results) == 3 and reply.auto_filters is not None and reply.auto_filters.fell_back
    assert "autoFilters:fallback (1 of 3 results within the inferred filters)" in reply.degraded


def test_more_inferred_values_than_a_filter_holds_are_cut_not_a_500(settings: Settings) -> None:
    # Given a workspace with 60 actors and an LLM that names every one of them
    actors = [f"dev{i:02d}" for i in range(60)]
    memory = service(settings, proposer=FakeClaude(_filters_reply(query="login", actorNames=actors)).proposer())
    memory.index(WS, [note(f"n{i}", "login change", actor_name=actor) for i, actor in enumerate(actors)])
    # When searching with autoFilters
    reply = _search(memory, "login changes by everyone", 5)
    # Then the filter holds the first 50 (a filter's limit) and the search answers
    assert reply.auto_filters is not None and reply.auto_filters.applied_filters is not None
    assert reply.auto_filters.applied_filters.actor_names == actors[:50]


def test_the_llm_is_told_the_clients_local_time(settings: Settings) -> None:
    claude = FakeClaude(_filters_reply(query="login", actorNames=["alice"]))
    memory = service(settings, proposer=claude.proposer())
    _team(memory)
    _search(memory, "what did alice do today", 1, timeZone="-08:00")
    assert "Now: 2025-12-14T04:00:00-08:00" in claude.requests[0]["messages"][0]["content"]
