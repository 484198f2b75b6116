"""Time phrases of a query resolved against the request time (UTC, weeks from Monday)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from neural_memory.models import SearchRequest
from neural_memory.search.filters.time_phrases import find_time_phrase, narrowed

# A Wednesday afternoon.
NOW = datetime(2025, 12, 17, 15, 30, tzinfo=UTC)


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.mark.parametrize(
    ("query", "start", "end", "remaining"),
    [
        ("deploys today", "2025-12-17T00:00:00+00:00", None, "deploys"),
        ("what broke yesterday?", "2025-12-16T00:00:00+00:00", "2025-12-16T23:59:59.999999+00:00", "what broke ?"),
        ("what did alice push last week", "2025-12-08T00:00:00+00:00", "2025-12-14T23:59:59.999999+00:00",
         "what did alice push"),
        ("incidents this week", "2025-12-15T00:00:00+00:00", None, "incidents"),
        ("releases last month", "2025-11-01T00:00:00+00:00", "2025-11-30T23:59:59.999999+00:00", "releases"),
        ("releases this month", "2025-12-01T00:00:00+00:00", None, "releases"),
        ("roadmap last year", "2024-01-01T00:00:00+00:00", "2024-12-31T23:59:59.999999+00:00", "roadmap"),
        ("errors in the last 3 days", "2025-12-14T15:30:00+00:00", None, "errors"),
        ("errors past 2 weeks", "2025-12-03T15:30:00+00:00", None, "errors"),
        ("What changed SINCE Monday", "2025-12-15T00:00:00+00:00", None, "What changed"),
        ("changes since wednesday", "2025-12-17T00:00:00+00:00", None, "changes"),
        ("changes since Thursday", "2025-12-11T00:00:00+00:00", None, "changes"),
        ("the call on Wednesday", "2025-12-10T00:00:00+00:00", "2025-12-10T23:59:59.999999+00:00", "the call"),
        ("the call on monday", "2025-12-15T00:00:00+00:00", "2025-12-15T23:59:59.999999+00:00", "the call"),
        ("the outage in March", "2025-03-01T00:00:00+00:00", "2025-03-31T23:59:59.999999+00:00", "the outage"),
        ("budget during December", "2025-12-01T00:00:00+00:00", "2025-12-31T23:59:59.999999+00:00", "budget"),
        ("hires since February", "2025-02-01T00:00:00+00:00", None, "hires"),
        ("what happened last week and this week", "2025-12-08T00:00:00+00:00", "2025-12-14T23:59:59.999999+00:00",
         "what happened and this week"),
    ],
)  # fmt: skip
def test_time_phrases_resolve_against_the_request_time(query: str, start: str, end: str | None, remaining: str) -> None:
    # Given a query with a time phrase, When resolved at NOW
    found = find_time_phrase(query, NOW)
    # Then the range and the query left are as a person would read them
    assert found is not None
    assert (found.start, found.end) == (_at(start), _at(end) if end else None)
    assert found.remaining == remaining


def test_a_month_not_begun_this_year_means_last_years() -> None:
    found = find_time_phrase("the offsite in December", datetime(2026, 3, 2, tzinfo=UTC))
    assert found is not None and (found.start, found.end) == (
        _at("2025-12-01T00:00:00+00:00"),
        _at("2025-12-31T23:59:59.999999+00:00"),
    )


@pytest.mark.parametrize(
    "query", ["todays menu", "lastweek", "mayday", "in marching order", "on mondays", "release 42"]
)
def test_no_phrase_inside_words_or_without_a_period(query: str) -> None:
    assert find_time_phrase(query, NOW) is None


def test_the_clients_date_range_wins_and_a_bare_phrase_is_kept() -> None:
    # Given a request that already bounds the dates, Then nothing is inferred
    bounded = {"dateRange": {"start": "2025-01-01T00:00:00Z"}}
    explicit = {"query": "deploys last week", "autoFilters": True, "filters": bounded}
    assert narrowed(SearchRequest.model_validate(explicit), NOW) is None
    # Given a query that is only a time phrase, Then it is searched as written (nothing would be left)
    assert narrowed(SearchRequest.model_validate({"query": "last week", "autoFilters": True}), NOW) is None


def test_other_filters_are_kept_beside_the_inferred_range() -> None:
    filters = {"sourceTypes": ["vercel"], "not": {"tiers": ["E"]}}
    body = {"query": "deploys yesterday", "autoFilters": True, "filters": filters}
    request, status = narrowed(SearchRequest.model_validate(body), NOW) or (None, None)
    assert request is not None and status is not None
    assert request.query == "deploys" and request.filters is not None
    assert request.filters.source_types == ["vercel"] and request.filters.excluded is not None
    date_range = request.filters.date_range
    assert date_range is not None and date_range.start == _at("2025-12-16T00:00:00+00:00")
    assert status.phrases == ["yesterday"] and status.applied_filters is not None
    assert status.applied_filters.source_types is None


@pytest.mark.parametrize(
    ("zone", "query", "start", "end"),
    [
        ("-08:00", "deploys today", "2025-12-17T00:00:00-08:00", None),
        ("+10:00", "deploys yesterday", "2025-12-17T00:00:00+10:00", "2025-12-17T23:59:59.999999+10:00"),
        ("America/New_York", "deploys today", "2025-12-17T00:00:00-05:00", None),
        ("Asia/Kolkata", "deploys this week", "2025-12-15T00:00:00+05:30", None),
    ],
)
def test_days_and_weeks_begin_at_the_clients_midnight(zone: str, query: str, start: str, end: str | None) -> None:
    # Given the request time (Wednesday 15:30 UTC: already Thursday in +10:00) and the client's zone
    request = SearchRequest.model_validate({"query": query, "autoFilters": True, "timeZone": zone})
    # When the time phrase is resolved
    narrowed_request, _ = narrowed(request, NOW) or (None, None)
    # Then its bounds are the client's days
    assert narrowed_request is not None and narrowed_request.filters is not None
    date_range = narrowed_request.filters.date_range
    assert date_range is not None
    assert (date_range.start, date_range.end) == (_at(start), _at(end) if end else None)
