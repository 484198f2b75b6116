"""Validation of the API contract's models: every bad input names its field."""

from __future__ import annotations

from typing import Any

import pytest
from neural_memory.models import ObservationsRequest, SearchRequest
from pydantic import ValidationError

VALID_OBSERVATION = {
    "source": "github",
    "observationType": "push",
    "occurredAt": "2025-12-12T10:00:00Z",
    "title": "Push to main",
}


def _loc(exc: ValidationError) -> str:
    return ".".join(str(p) for p in exc.errors()[0]["loc"])


def test_search_defaults_match_api_md() -> None:
    # Given a minimal body
    # When it is validated
    request = SearchRequest.model_validate({"query": "  why did the deploy fail  "})
    # Then the defaults are the documented ones and the query is trimmed
    assert request.query == "why did the deploy fail"
    assert (request.top_k, request.mode, request.rerank, request.llm_filter, request.explain) == (
        10,
        "hybrid",
        "balanced",
        True,
        False,
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "x" * 2001}, "query"),
        ({"query": "q", "topK": 0}, "topK"),
        ({"query": "q", "topK": 101}, "topK"),
        ({"query": "q", "topK": "10"}, "topK"),
        ({"query": "q", "topK": 2.5}, "topK"),
        ({"query": "q", "mode": "fuzzy"}, "mode"),
        ({"query": "q", "rerank": "best"}, "rerank"),
        ({"query": "q", "llmFilter": "yes"}, "llmFilter"),
        ({"query": "q", "color": "red"}, "color"),
        ({"query": "q", "filters": {"repo": ["a"]}}, "filters.repo"),
        ({"query": "q", "filters": {"tiers": ["B"]}}, "filters.tiers.0"),
        ({"query": "q", "filters": {"sourceTypes": []}}, "filters.sourceTypes"),
        ({"query": "q", "filters": {"actorNames": [f"a{i}" for i in range(51)]}}, "filters.actorNames"),
        ({"query": "q", "filters": {"actorNames": ["x" * 201]}}, "filters.actorNames.0"),
        ({"query": "q", "filters": {"sourceTypes": ["has space"]}}, "filters.sourceTypes.0"),
        ({"query": "q", "filters": {"dateRange": {"start": "2025-12-01T00:00:00"}}}, "filters.dateRange.start"),
        ({"query": "q", "filters": {"dateRange": {"start": "yesterday"}}}, "filters.dateRange.start"),
        (
            {"query": "q", "filters": {"dateRange": {"start": "2025-12-14T00:00:00Z", "end": "2025-12-01T00:00:00Z"}}},
            "filters.dateRange",
        ),
        ({"query": "q", "excludeSessionId": ""}, "excludeSessionId"),
        ({"query": "q", "diversity": 1.5}, "diversity"),
        ({"query": "q", "timeZone": "Mars/Olympus_Mons"}, "timeZone"),
        ({"query": "q", "timeZone": "+24:00"}, "timeZone"),
        ({"query": "q", "timeZone": "../../etc/passwd"}, "timeZone"),
        ({"query": "q", "diversity": "high"}, "diversity"),
        ({"query": "q", "autoFilters": "yes"}, "autoFilters"),
        ({"query": "q", "includeSuperseded": 1}, "includeSuperseded"),
        ({"query": "q", "filters": {"metadata": {}}}, "filters.metadata"),
        ({"query": "q", "filters": {"metadata": {"repo": {"name": "api"}}}}, "filters.metadata.repo"),
        ({"query": "q", "filters": {"metadata": {"labels": ["bug"]}}}, "filters.metadata.labels"),
        ({"query": "q", "filters": {"metadata": {"owner": None}}}, "filters.metadata.owner"),
        ({"query": "q", "filters": {"metadata": {"ratio": float("nan")}}}, "filters.metadata.ratio"),
        ({"query": "q", "filters": {"metadata": {"n": 10**20}}}, "filters.metadata.n"),
        ({"query": "q", "filters": {"metadata": {"": "x"}}}, "filters.metadata..[key]"),
        ({"query": "q", "filters": {"anyOf": []}}, "filters.anyOf"),
        ({"query": "q", "filters": {"anyOf": [{"tiers": ["A"]}] * 11}}, "filters.anyOf"),
        ({"query": "q", "filters": {"anyOf": [{"anyOf": [{"tiers": ["A"]}]}]}}, "filters.anyOf.0.anyOf"),
        ({"query": "q", "filters": {"anyOf": [{"tiers": ["B"]}]}}, "filters.anyOf.0.tiers.0"),
    ],
)
def test_bad_search_input_names_the_field(body: dict[str, Any], field: str) -> None:
    # Given a body with one bad value
    # When it is validated
    with pytest.raises(ValidationError) as caught:
        SearchRequest.model_validate(body)
    # Then the error's location is that field (camelCase, as on the wire)
    assert _loc(caught.value) == field


def test_date_range_accepts_either_end_and_equal_ends() -> None:
    # Given ranges open on one side, or a single instant
    for date_range in ({"start": "2025-12-01T00:00:00Z"}, {"end": "2025-12-01T00:00:00+02:00"}):
        # When validated, Then they are accepted
        SearchRequest.model_validate({"query": "q", "filters": {"dateRange": date_range}})
    instant = "2025-12-01T00:00:00Z"
    SearchRequest.model_validate({"query": "q", "filters": {"dateRange": {"start": instant, "end": instant}}})


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"title": ""}, "observations.0.title"),
        ({"occurredAt": "2025-12-12T10:00:00"}, "observations.0.occurredAt"),
        ({"url": "javascript:alert(1)"}, "observations.0.url"),
        ({"tier": "Z"}, "observations.0.tier"),
        ({"id": "has/slash"}, "observations.0.id"),
        ({"content": "x" * 200_001}, "observations.0.content"),
        ({"metadata": {"blob": "x" * 20_000}}, "observations.0.metadata"),
        ({"metadata": {"ratio": float("nan")}}, "observations.0.metadata"),
        ({"metadata": {"deep": {"limit": float("inf")}}}, "observations.0.metadata"),
        ({"unknown": 1}, "observations.0.unknown"),
    ],
)
def test_bad_observation_names_the_field(change: dict[str, Any], field: str) -> None:
    # Given an observation with one bad value
    body = {"observations": [{**VALID_OBSERVATION, **change}]}
    # When validated
    with pytest.raises(ValidationError) as caught:
        ObservationsRequest.model_validate(body)
    # Then the location names it
    assert _loc(caught.value) == field


@pytest.mark.parametrize("count", [0, 101])
def test_observation_batch_is_1_to_100(count: int) -> None:
    # Given too few or too many observations
    # When validated, Then the list itself is named
    with pytest.raises(ValidationError) as caught:
        ObservationsRequest.model_validate({"observations": [VALID_OBSERVATION] * count})
    assert _loc(caught.value) == "observations"


def test_a_title_is_derived_from_the_content_when_absent() -> None:
    from datetime import UTC, datetime

    from neural_memory.domain.tiers import DEFAULT_POLICY
    from neural_memory.ingest.prepare import prepare

    now = datetime(2025, 12, 14, tzinfo=UTC)
    untitled = {key: value for key, value in VALID_OBSERVATION.items() if key != "title"}
    # Given a chat turn without a title, a short one, and a titled observation
    turn = {**untitled, "content": "I moved the deploy to Friday because the billing migration is not done yet."}
    short = {**untitled, "content": "  sounds good  "}
    observations = ObservationsRequest.model_validate({"observations": [turn, short, VALID_OBSERVATION]}).observations
    # When they are prepared for the store
    titles = [prepare(o, now=now, policy=DEFAULT_POLICY, ttl_days=7).record.title for o in observations]
    # Then the first words become the title (marked when cut), and a given title is kept
    assert titles == [
        "I moved the deploy to Friday because the billing migration is not…",
        "sounds good",
        "Push to main",
    ]


@pytest.mark.parametrize("content", [None, "", "   "])
def test_without_a_title_the_content_is_required_and_named(content: str | None) -> None:
    untitled = {key: value for key, value in VALID_OBSERVATION.items() if key != "title"}
    if content is not None:
        untitled["content"] = content
    with pytest.raises(ValidationError) as err:
        ObservationsRequest.model_validate({"observations": [untitled]})
    assert _loc(err.value) == "observations.0.content"


@pytest.mark.parametrize("value", [1.5, -0.1, "0.4", True])
def test_rerank_min_score_is_a_number_in_0_1(value: object) -> None:
    with pytest.raises(ValidationError) as err:
        SearchRequest.model_validate({"query": "deploy", "rerankMinScore": value})
    assert _loc(err.value) == "rerankMinScore"


def test_a_compact_boundary_needs_the_session_it_bounds() -> None:
    with pytest.raises(ValidationError) as err:
        SearchRequest.model_validate({"query": "deploy", "excludeAfter": "2025-12-13T13:30:00Z"})
    assert _loc(err.value) == "excludeAfter"
    bounded = {"query": "deploy", "excludeSessionId": "s-1", "excludeAfter": "2025-12-13T13:30:00+01:00"}
    assert SearchRequest.model_validate(bounded).exclude_after is not None
