"""Every filter of the search API, alone and combined, returns exactly the matching observations from the
SQLite store, in every mode; hostile input never errors."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.search.tiers import DEFAULT_POLICY

from tests.helpers.events import NOW
from tests.helpers.handlers import ingest, search

if TYPE_CHECKING:
    from neural_memory.local.gateway import LocalLambdaContext
    from neural_memory.service import Service

pytestmark = pytest.mark.integration

# Every title holds "acme", so a lexical search for it reaches every live observation.
DATA: list[dict[str, Any]] = [
    {"id": "push-1", "source": "github", "observationType": "push", "actorName": "octocat",
     "occurredAt": "2025-12-01T10:00:00Z", "title": "acme push: fix login redirect",
     "metadata": {"repo": "acme/api", "pr": 42, "urgent": True, "labels": ["bug"]}},
    {"id": "pr-1", "source": "github", "observationType": "pull_request_merged", "actorName": "hubot",
     "occurredAt": "2025-12-10T09:00:00Z", "title": "acme PR merged: session refresh in middleware",
     "metadata": {"repo": "acme/api", "pr": 42.0, "urgent": False}},
    {"id": "pr-old", "source": "github", "observationType": "pull_request_opened", "actorName": "octocat",
     "occurredAt": "2025-12-02T09:00:00Z", "title": "acme PR opened long ago: expired by now"},
    {"id": "deploy-1", "source": "vercel", "observationType": "deployment_error", "actorName": "octocat",
     "occurredAt": "2025-12-12T10:01:02Z", "title": "acme deployment failed: console production",
     "metadata": {"repo": "acme/console", "pr": "42", "urgent": 1}},
    {"id": "deploy-2", "source": "vercel", "observationType": "deployment_succeeded", "actorName": "hubot",
     "occurredAt": "2025-12-13T08:00:00Z", "title": "acme deployment succeeded: console preview"},
    {"id": "note-1", "source": "manual", "observationType": "note", "actorName": "octocat",
     "occurredAt": "2025-11-20T12:00:00Z", "title": "acme note: why the deploy failed", "tier": "A"},
    {"id": "decision-1", "source": "manual", "observationType": "decision", "actorName": "mona lisa",
     "occurredAt": "2025-12-12T00:00:00Z", "title": "acme decision: advisory locks for billing",
     "metadata": {"repo": "acme/api", "pr": 7, "nested": {"repo": "acme/api"}}},
    {"id": "turn-0", "source": "agent", "observationType": "conversation_turn", "actorName": "support-bot",
     "occurredAt": "2025-12-13T13:00:00Z", "title": "acme chat: customer opens the thread", "sessionId": "sess-42"},
    {"id": "turn-1", "source": "agent", "observationType": "conversation_turn", "actorName": "support-bot",
     "occurredAt": "2025-12-13T13:45:00Z", "title": "acme chat: customer asks about 429", "sessionId": "sess-42"},
    {"id": "turn-2", "source": "agent", "observationType": "conversation_turn", "actorName": "support-bot",
     "occurredAt": "2025-12-13T14:00:00Z", "title": "acme chat: follow-up on webhooks", "sessionId": "sess-43"},
    {"id": "pinned-push", "source": "github", "observationType": "push", "actorName": "hubot",
     "occurredAt": "2025-12-12T00:00:00Z", "title": "acme push pinned as collaborative", "tier": "C"},
]  # fmt: skip


def _tier(obs: dict[str, Any]) -> str:
    return str(obs.get("tier") or DEFAULT_POLICY.get(obs["observationType"], "C"))


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value)


def _live(obs: dict[str, Any]) -> bool:
    return _tier(obs) != "C" or _at(obs["occurredAt"]) + timedelta(days=7) > NOW


# A session to exclude: its id, or its id and the compact boundary after which it is excluded.
Exclude = str | tuple[str, str] | None


def exclusion(exclude: Exclude) -> dict[str, str]:
    """The request fields of an exclusion."""
    if exclude is None:
        return {}
    if isinstance(exclude, str):
        return {"excludeSessionId": exclude}
    return {"excludeSessionId": exclude[0], "excludeAfter": exclude[1]}


def _excluded(obs: dict[str, Any], exclude: Exclude) -> bool:
    fields = exclusion(exclude)
    if not fields or obs.get("sessionId") != fields["excludeSessionId"]:
        return False
    return "excludeAfter" not in fields or _at(obs["occurredAt"]) > _at(fields["excludeAfter"])


def _matches(obs: dict[str, Any], filters: dict[str, Any], exclude: Exclude) -> bool:
    checks = [
        _live(obs),
        obs["source"] in filters.get("sourceTypes", [obs["source"]]),
        obs["observationType"] in filters.get("observationTypes", [obs["observationType"]]),
        obs["actorName"] in filters.get("actorNames", [obs["actorName"]]),
        _tier(obs) in filters.get("tiers", [_tier(obs)]),
        not _excluded(obs, exclude),
    ]
    excluded = filters.get("not", {})
    checks += [
        obs["source"] not in excluded.get("sourceTypes", []),
        obs["observationType"] not in excluded.get("observationTypes", []),
        obs["actorName"] not in excluded.get("actorNames", []),
        _tier(obs) not in excluded.get("tiers", []),
    ]
    date_range = filters.get("dateRange", {})
    if "start" in date_range:
        checks.append(_at(obs["occurredAt"]) >= _at(date_range["start"]))
    if "end" in date_range:
        checks.append(_at(obs["occurredAt"]) <= _at(date_range["end"]))
    metadata = obs.get("metadata", {})
    wanted = filters.get("metadata", {})
    checks += [key in metadata and _same_value(metadata[key], value) for key, value in wanted.items()]
    if "anyOf" in filters:
        checks.append(any(_matches(obs, group, None) for group in filters["anyOf"]))
    return all(checks)


def _same_value(stored: object, wanted: object) -> bool:
    """JSON equality: the same kind (a boolean is no number) and value (42 equals 42.0)."""
    if isinstance(wanted, bool) or isinstance(stored, bool):
        return stored is wanted
    if isinstance(wanted, int | float):
        return isinstance(stored, int | float) and stored == wanted
    return isinstance(stored, str) and stored == wanted


CASES: list[tuple[str, dict[str, Any], Exclude]] = [
    ("none", {}, None),
    ("one source", {"sourceTypes": ["vercel"]}, None),
    ("two sources", {"sourceTypes": ["github", "manual"]}, None),
    ("type", {"observationTypes": ["push"]}, None),
    ("two types", {"observationTypes": ["deployment_error", "decision"]}, None),
    ("actor", {"actorNames": ["octocat"]}, None),
    ("actor with a space", {"actorNames": ["mona lisa"]}, None),
    ("tier A", {"tiers": ["A"]}, None),
    ("tier E", {"tiers": ["E"]}, None),
    ("tiers C and E", {"tiers": ["C", "E"]}, None),
    ("date start", {"dateRange": {"start": "2025-12-12T00:00:00Z"}}, None),
    ("date end", {"dateRange": {"end": "2025-12-10T09:00:00Z"}}, None),
    ("date both, inclusive", {"dateRange": {"start": "2025-12-10T09:00:00Z", "end": "2025-12-12T10:01:02Z"}}, None),
    ("date in another zone", {"dateRange": {"start": "2025-12-12T12:01:02+02:00"}}, None),
    ("unknown value", {"actorNames": ["nobody"]}, None),
    ("not from a bot", {"not": {"actorNames": ["hubot", "support-bot"]}}, None),
    ("anything but deployments", {"not": {"sourceTypes": ["vercel"]}}, None),
    ("not a type, not a tier", {"not": {"observationTypes": ["push"], "tiers": ["C"]}}, None),
    (
        "include and exclude on the same field",
        {"sourceTypes": ["github", "vercel"], "not": {"sourceTypes": ["vercel"]}},
        None,
    ),
    ("exclude everything included", {"tiers": ["A"], "not": {"tiers": ["A", "E"]}}, None),
    ("exclude an unknown value", {"not": {"actorNames": ["nobody"]}}, None),
    ("metadata string", {"metadata": {"repo": "acme/api"}}, None),
    ("metadata number: 42 is 42.0, not the string 42", {"metadata": {"pr": 42}}, None),
    ("metadata string of digits", {"metadata": {"pr": "42"}}, None),
    ("metadata true is not 1", {"metadata": {"urgent": True}}, None),
    ("metadata false", {"metadata": {"urgent": False}}, None),
    ("metadata keys combined", {"metadata": {"repo": "acme/api", "pr": 7}}, None),
    ("metadata: a nested value is not a top-level key", {"metadata": {"repo": "acme/console", "pr": 7}}, None),
    ("metadata: unknown key", {"metadata": {"nothing": "here"}}, None),
    ("anyOf two groups", {"anyOf": [{"sourceTypes": ["vercel"]}, {"actorNames": ["mona lisa"]}]}, None),
    ("anyOf with an empty match", {"anyOf": [{"actorNames": ["nobody"]}, {"tiers": ["A"]}]}, None),
    ("anyOf matching nothing", {"anyOf": [{"actorNames": ["nobody"]}, {"metadata": {"repo": "none"}}]}, None),
    (
        "anyOf under top-level conditions, with not, dates and metadata in groups",
        {
            "sourceTypes": ["github", "vercel", "manual"],
            "anyOf": [
                {"observationTypes": ["push"], "not": {"actorNames": ["octocat"]}},
                {"dateRange": {"start": "2025-12-12T00:00:00Z"}, "metadata": {"repo": "acme/api"}},
                {"metadata": {"urgent": 1}},
            ],
        },
        None,
    ),
    ("anyOf and a session excluded", {"anyOf": [{"sourceTypes": ["agent"]}, {"tiers": ["A"]}]}, "sess-42"),
    ("exclude session", {}, "sess-42"),
    ("exclude a session after its compact boundary", {}, ("sess-42", "2025-12-13T13:30:00Z")),
    ("compact boundary in another zone, equal to a turn's time", {}, ("sess-42", "2025-12-13T14:00:00+01:00")),
    ("compact boundary before every turn", {"sourceTypes": ["agent"]}, ("sess-42", "2025-12-01T00:00:00Z")),
    (
        "combined",
        {
            "sourceTypes": ["github", "vercel"],
            "actorNames": ["octocat", "hubot"],
            "tiers": ["C", "E"],
            "dateRange": {"start": "2025-12-10T00:00:00Z", "end": "2025-12-13T23:59:59Z"},
        },
        None,
    ),
    ("combined with session", {"sourceTypes": ["agent"], "observationTypes": ["conversation_turn"]}, "sess-43"),
]


@pytest.fixture
def loaded(service: Service, lambda_context: LocalLambdaContext) -> Service:
    status, body = ingest({"observations": DATA}, lambda_context)
    assert status == 200, body
    assert body["created"] == len(DATA)
    return service


@pytest.mark.parametrize(("name", "filters", "exclude"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_filters_return_exactly_the_matching_observations(
    loaded: Service,
    lambda_context: LocalLambdaContext,
    name: str,
    filters: dict[str, Any],
    exclude: Exclude,
    mode: str,
) -> None:
    # Given ten observations across sources, types, actors, tiers, dates and sessions (one expired)
    body: dict[str, Any] = {"query": "acme", "topK": 100, "mode": mode, "llmFilter": False}
    if filters:
        body["filters"] = filters
    body |= exclusion(exclude)
    # When searching with the filter
    status, reply = search(body, lambda_context)
    # Then exactly the matching observations come back (semantic mode cannot see never-embedded E tier)
    assert status == 200, reply
    expected = {o["id"] for o in DATA if _matches(o, filters, exclude)}
    if mode == "semantic":
        expected = {i for i in expected if _tier(next(o for o in DATA if o["id"] == i)) != "E"}
    assert {r["id"] for r in reply["results"]} == expected
    assert all(0.0 <= r["score"] <= 1.0 for r in reply["results"])
    assert [r["score"] for r in reply["results"]] == sorted((r["score"] for r in reply["results"]), reverse=True)


@pytest.mark.parametrize(
    "query",
    [
        '"foo" OR NEAR(',
        "NEAR(acme push, 2)",
        "*",
        "acme*",
        "title:acme",
        "'; DROP TABLE observations; --",
        '"unterminated',
        "^acme AND NOT",
        "()",
        "💥 ünïcödé ACME",
        "\x00acme",
    ],
)
def test_hostile_queries_never_error(loaded: Service, lambda_context: LocalLambdaContext, query: str) -> None:
    # Given FTS5 syntax, SQL and odd characters in the query
    # When searching in every mode
    for mode in ("hybrid", "keyword"):
        status, reply = search({"query": query, "mode": mode}, lambda_context)
        # Then the search answers and the store is intact
        assert status == 200, reply
    assert loaded.store.count("acme") == len(DATA)


def test_hostile_filter_values_match_nothing(loaded: Service, lambda_context: LocalLambdaContext) -> None:
    # Given filter values shaped like SQL
    body = {"query": "acme", "filters": {"actorNames": ["x' OR '1'='1", 'x") OR 1=1 --']}}
    # When searching, Then nothing matches and nothing breaks
    status, reply = search(body, lambda_context)
    assert status == 200 and reply["results"] == []
