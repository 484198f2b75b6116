"""The client's rules that need no server: when to retry and how long to wait, where a stage URL
sends requests, and replies from a newer server. HTTP is httpx's in-memory transport."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from neural_memory.local.client import NeuralMemoryClient, RetryPolicy, ServerError

SEARCH_REPLY: dict[str, Any] = {
    "requestId": "r1",
    "results": [],
    "latency": {"total": 1, "embed": 0, "retrieval": 1, "llmFilter": 0, "rerank": 0},
    "llm": {"bypassed": True, "filtered": 0, "reason": "small_result_set"},
    "rerank": {"mode": "fast", "provider": None},
    "threshold": {"minSimilarity": 0.2, "dropped": 0},
    "degraded": [],
}


def reply(status: int, retry_after: str | None = None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(status, headers=headers)


@pytest.mark.parametrize(
    ("response", "attempt", "expected"),
    [
        (reply(503, "2"), 0, 2.0),  # the server's word
        (reply(429, "0"), 0, 0.5),  # at least the backoff
        (reply(429, "0"), 2, 2.0),  # which doubles per attempt
        (reply(503, "1"), 3, None),  # retries spent
        (reply(503), 0, None),  # no Retry-After: not retried
        (reply(500, "1"), 0, None),  # only 429 and 503
        (reply(502, "1"), 0, None),
        (reply(503, "31"), 0, None),  # longer than max_wait_s: raised at once
        (reply(503, "Wed, 21 Oct 2015 07:28:00 GMT"), 0, None),  # a date: not this API's form
    ],
)
def test_only_429_and_503_with_retry_after_are_retried(
    response: httpx.Response, attempt: int, expected: float | None
) -> None:
    assert RetryPolicy(max_retries=3, backoff_s=0.5, max_wait_s=30).delay(response, attempt) == expected


def test_a_stage_url_keeps_its_path_and_a_newer_servers_fields_are_ignored() -> None:
    # Given a deployed stack's ApiUrl (it ends in the stage, /v1/) answering with a field this client does not know
    seen: list[httpx.Request] = []

    def stage(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={**SEARCH_REPLY, "facets": {"sourceTypes": {"github": 3}}})

    api_url = "https://abc.execute-api.eu-west-1.amazonaws.com/v1/"
    with NeuralMemoryClient(api_url, "k", transport=httpx.MockTransport(stage)) as client:
        # When searching
        result = client.search("deploy", top_k=3)
    # Then the request went to <ApiUrl>v1/search with the key and only the fields given, and the reply parsed
    assert str(seen[0].url) == "https://abc.execute-api.eu-west-1.amazonaws.com/v1/v1/search"
    assert seen[0].headers["Authorization"] == "Bearer k"
    assert json.loads(seen[0].content) == {"query": "deploy", "topK": 3}
    assert result.request_id == "r1" and result.results == []


def test_an_error_page_that_is_not_the_envelope_keeps_its_text() -> None:
    page = httpx.MockTransport(lambda request: httpx.Response(504, text="Endpoint request timed out"))
    with NeuralMemoryClient("http://api.test", "k", transport=page) as client, pytest.raises(ServerError) as error:
        client.get("note-1")
    failure = error.value
    assert (failure.status, failure.code, failure.message) == (504, "http_error", "Endpoint request timed out")
    assert failure.request_id is None
