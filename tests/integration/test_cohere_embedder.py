"""The Cohere embedder through the official SDK, with only the HTTP transport faked."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from neural_memory.errors import BackendUnavailable, ConfigurationError
from neural_memory.providers.embeddings.cohere import CohereEmbedder

pytestmark = pytest.mark.integration


def _embedder(handler: Any) -> tuple[CohereEmbedder, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append({"url": str(request.url), "body": json.loads(request.content)})
        reply: httpx.Response = handler(request)
        return reply

    client = httpx.Client(transport=httpx.MockTransport(record))
    return CohereEmbedder(api_key="test-key", timeout_s=1.0, http_client=client), seen


def _ok(request: httpx.Request) -> httpx.Response:
    texts = json.loads(request.content)["texts"]
    return httpx.Response(
        200,
        json={
            "id": "emb-1",
            "embeddings": {"float": [[3.0, 4.0] + [0.0] * 1022 for _ in texts]},
            "texts": texts,
            "meta": {"api_version": {"version": "2"}},
            "response_type": "embeddings_by_type",
        },
    )


def test_documents_are_embedded_in_batches_of_96_as_search_document() -> None:
    # Given 100 texts
    embedder, seen = _embedder(_ok)
    # When embedded as documents
    vectors = embedder.embed([f"text {i}" for i in range(100)], "search_document")
    # Then two calls went out with the right input type, and vectors come back unit length
    assert [len(call["body"]["texts"]) for call in seen] == [96, 4]
    assert {call["body"]["input_type"] for call in seen} == {"search_document"}
    assert seen[0]["body"]["model"] == "embed-english-v3.0" and seen[0]["url"].endswith("/v2/embed")
    assert len(vectors) == 100 and vectors[0][:2] == [0.6, 0.8]


def test_queries_use_search_query() -> None:
    embedder, seen = _embedder(_ok)
    embedder.embed(["why did the deploy fail"], "search_query")
    assert seen[0]["body"]["input_type"] == "search_query"


@pytest.mark.parametrize(
    "reply",
    [
        httpx.Response(429, json={"message": "rate limited"}),
        httpx.Response(500, json={"message": "boom"}),
        httpx.Response(503, text="unavailable"),
        httpx.Response(200, json={"unexpected": True}),
        httpx.Response(200, text="not json"),
    ],
    ids=["429", "500", "503", "malformed", "not-json"],
)
def test_provider_failures_become_backend_unavailable(reply: httpx.Response) -> None:
    embedder, _ = _embedder(lambda request: reply)
    with pytest.raises(BackendUnavailable):
        embedder.embed(["x"], "search_query")


def test_timeout_becomes_backend_unavailable() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    embedder, _ = _embedder(slow)
    with pytest.raises(BackendUnavailable):
        embedder.embed(["x"], "search_query")


def test_missing_key_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="NM_COHERE_API_KEY"):
        CohereEmbedder(api_key=None).embed(["x"], "search_query")
