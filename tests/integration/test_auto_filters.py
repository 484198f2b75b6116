"""autoFilters on both stores: a time phrase becomes a date range, the reply says what was applied
and what was searched, and too few results fall back to the query as written."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.models import SearchRequest

from tests.helpers.pipeline import NOW, note
from tests.integration.test_store_conformance import svc  # noqa: F401  (the two-store fixture)

if TYPE_CHECKING:
    from neural_memory.models import SearchResponse
    from neural_memory.service import Service

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
