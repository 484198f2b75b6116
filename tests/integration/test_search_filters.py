"""Every filter of the search API, alone and combined, returns exactly the matching observations from the
SQLite store, in every mode; hostile input never errors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.filter_cases import CASES, DATA, Exclude, embedded, exclusion, matches
from tests.helpers.handlers import ingest, search

if TYPE_CHECKING:
    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.service import Service

pytestmark = pytest.mark.integration


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
    # Then exactly the matching observations come back (semantic mode cannot see what has no
    # vectors: E, and C past its window)
    assert status == 200, reply
    expected = {o["id"] for o in DATA if matches(o, filters, exclude)}
    if mode == "semantic":
        expected = {i for i in expected if embedded(next(o for o in DATA if o["id"] == i))}
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
