"""The handlers behind API Gateway events from events/api: replies, and every error's envelope."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.stores.sqlite.store import SqliteStore

from functions.observations import app as observations_app
from functions.search import app as search_app
from tests.helpers.events import api_event, load_event
from tests.helpers.fakes import FailingEmbedder
from tests.helpers.handlers import call, ingest, search

if TYPE_CHECKING:
    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration

LATENCY_KEYS = {"total", "embed", "retrieval", "llmFilter", "rerank"}


@pytest.fixture
def loaded(service: Service, lambda_context: LocalLambdaContext) -> Service:
    status, body = call(observations_app, load_event("api/observations_post"), lambda_context)
    assert status == 200, body
    return service


def test_sample_search_event_answers_with_results_and_every_latency_key(
    loaded: Service, lambda_context: LocalLambdaContext
) -> None:
    # Given the sample observations ingested for workspace acme
    # When the sample search event arrives
    status, body = call(search_app, load_event("api/search_post"), lambda_context)
    # Then the reply has results, the latency breakdown and the gate status
    assert status == 200, body
    assert body["requestId"] == "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"
    assert body["results"][0]["id"] == "note-deploy-env-vars"
    assert set(body["latency"]) == LATENCY_KEYS
    assert all(isinstance(v, int) and v >= 0 for v in body["latency"].values())
    assert body["latency"]["total"] >= sum(v for k, v in body["latency"].items() if k != "total")
    assert body["llm"] == {"bypassed": True, "filtered": 0, "reason": "small_result_set", "scored": 0, "notes": []}
    assert body["rerank"] == {"mode": "fast", "provider": None} and body["degraded"] == []  # the event asks for fast
    first = body["results"][0]
    assert set(first) == {
        "id", "title", "url", "snippet", "score", "source", "observationType", "actorName", "createdBy", "trust",
        "flags", "occurredAt", "tier", "metadata", "scores", "duplicates",
    }  # fmt: skip
    assert first["metadata"]["vectorScore"] == first["scores"]["vector"] == first["metadata"]["relevanceScore"]


def test_explain_adds_stage_scores(loaded: Service, lambda_context: LocalLambdaContext) -> None:
    status, body = search({"query": "deploy failed", "explain": True}, lambda_context)
    assert status == 200
    stages = [step["stage"] for step in body["results"][0]["explain"]]
    assert stages == [
        "retrieval.lexical", "retrieval.vector", "fusion", "recencyAndTier", "llmFilter", "rerank", "topK",
    ]  # fmt: skip


def test_unconfigured_rerank_degrades_to_fast_and_says_so(loaded: Service, lambda_context: LocalLambdaContext) -> None:
    status, body = search({"query": "deploy failed", "rerank": "balanced"}, lambda_context)
    assert status == 200
    assert body["degraded"] == ["rerank:balanced->fast (Cohere not configured)"]


def test_gate_bypass_reasons(loaded: Service, lambda_context: LocalLambdaContext) -> None:
    # Given more than five candidates
    sample = json.loads(load_event("api/observations_post")["body"])["observations"][0]
    topics = ["the billing worker retries webhooks", "the search index was rebuilt", "the on-call rota changed"]
    extra = [{**sample, "id": f"n{i}", "title": topic, "content": f"{topic} today."} for i, topic in enumerate(topics)]
    ingest({"observations": extra}, lambda_context)
    _, many = search({"query": "the", "topK": 10}, lambda_context)
    _, off = search({"query": "the", "llmFilter": False}, lambda_context)
    # Then with no LLM configured the gate is bypassed as not configured, or as disabled when off
    assert many["llm"]["reason"] == "not_configured"
    assert off["llm"]["reason"] == "disabled"
    assert many["latency"]["llmFilter"] == 0


def test_observation_get_and_delete_sample_events(loaded: Service, lambda_context: LocalLambdaContext) -> None:
    # Given an ingested observation
    # When it is read
    status, body = call(observations_app, load_event("api/observation_get"), lambda_context)
    # Then it comes back whole, with its resolved tier and timestamps
    assert status == 200, body
    assert body["id"] == "note-deploy-env-vars" and body["tier"] == "A" and body["expiresAt"] is None
    assert body["ingestedAt"] == "2025-12-14T12:00:00Z"
    # When deleted, Then it is gone
    status, body = call(observations_app, load_event("api/observation_delete"), lambda_context)
    assert (status, body["deleted"]) == (200, True)
    status, body = call(observations_app, load_event("api/observation_get"), lambda_context)
    assert status == 404 and body["error"]["code"] == "not_found"
    status, _ = call(observations_app, load_event("api/observation_delete"), lambda_context)
    assert status == 404


def test_ingest_is_idempotent_by_id_and_by_source_event(service: Service, lambda_context: LocalLambdaContext) -> None:
    # Given observations with and without ids
    body = json.loads(load_event("api/observations_post")["body"])
    anonymous = {k: v for k, v in body["observations"][0].items() if k != "id"}
    body["observations"].append(anonymous)
    # When the same batch is sent twice
    _, first = ingest(body, lambda_context)
    _, second = ingest(body, lambda_context)
    # Then the second only updates, and the derived id is stable
    assert (first["created"], first["updated"]) == (6, 0)
    assert (second["created"], second["updated"]) == (0, 6)
    assert first["ids"] == second["ids"] and first["ids"][-1].startswith("obs_")
    assert service.store.count("acme") == 6


def test_ingest_reply_lists_ids_in_request_order(service: Service, lambda_context: LocalLambdaContext) -> None:
    # Given one observation already stored
    sample = json.loads(load_event("api/observations_post")["body"])["observations"]
    ingest({"observations": [sample[1]]}, lambda_context)
    # When a batch mixes a new one before the existing one
    _, reply = ingest({"observations": [sample[0], sample[1]]}, lambda_context)
    # Then ids follow the request, not created-then-updated
    assert reply["ids"] == [sample[0]["id"], sample[1]["id"]]
    assert (reply["created"], reply["updated"]) == (1, 1)


BAD_SEARCHES: list[tuple[Any, str]] = [
    ("{not json", "body"),
    ({"query": ""}, "query"),
    ({"query": "q", "topK": 0}, "topK"),
    ({"query": "q", "topK": 101}, "topK"),
    ({"query": "q", "mode": "fuzzy"}, "mode"),
    ({"query": "q", "unknown": True}, "unknown"),
    ({"query": "q", "filters": {"tiers": ["X"]}}, "filters.tiers.0"),
    ({"query": "q", "filters": {"sourceTypes": ["s"] * 51}}, "filters.sourceTypes"),
    ({"query": "q", "filters": {"dateRange": {"start": "2025-12-14T00:00:00Z", "end": "2025-12-01T00:00:00Z"}}},
     "filters.dateRange"),
    ({"query": "q", "filters": {"dateRange": {"start": "2025-12-14T00:00:00"}}}, "filters.dateRange.start"),
    ({"query": "x" * 2001}, "query"),
    ([1, 2], "body"),
    ("null", "body"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "field"), BAD_SEARCHES)
def test_bad_input_is_a_400_envelope_naming_the_field(
    service: Service, lambda_context: LocalLambdaContext, body: Any, field: str
) -> None:
    # Given a malformed or invalid body
    # When searching
    status, reply = search(body, lambda_context)
    # Then 400 with the error envelope, naming the field, with no stack trace
    assert status == 400, reply
    assert set(reply) == {"error", "requestId"}
    assert reply["error"]["code"] == "validation_error"
    assert reply["error"]["details"][0]["field"] == field
    assert reply["error"]["message"].startswith(field)
    assert "Traceback" not in json.dumps(reply)


def test_no_workspace_in_the_authorizer_context_is_401(service: Service, lambda_context: LocalLambdaContext) -> None:
    status, reply = search({"query": "q"}, lambda_context, workspace=None)
    assert status == 401 and reply["error"]["code"] == "unauthorized"


def test_oversize_body_is_413(service: Service, lambda_context: LocalLambdaContext) -> None:
    body = {"query": "q", "excludeSessionId": "x" * (service.settings.max_body_bytes + 1)}
    status, reply = search(body, lambda_context)
    assert status == 413 and reply["error"]["code"] == "payload_too_large"


def test_non_json_content_type_is_415(service: Service, lambda_context: LocalLambdaContext) -> None:
    event = api_event("api/search_post", "query=x")
    event["headers"]["Content-Type"] = "text/csv"
    event["multiValueHeaders"]["Content-Type"] = ["text/csv"]
    status, reply = call(search_app, event, lambda_context)
    assert status == 415 and reply["error"]["code"] == "unsupported_media_type"


def test_bad_path_id_is_400(service: Service, lambda_context: LocalLambdaContext) -> None:
    event = load_event("api/observation_get")
    event["path"] = "/v1/observations/%20bad%20id"
    event["pathParameters"] = {"id": " bad id"}
    status, reply = call(observations_app, event, lambda_context)
    assert status == 400 and reply["error"]["details"][0]["field"] == "id"


def _service_with(embedder: Embedder | None, settings: Settings) -> Service:
    return Service(SqliteStore(settings.sqlite_path), embedder, settings)


def test_embedding_outage_answers_hybrid_from_lexical_and_semantic_with_503(
    settings: Settings, lambda_context: LocalLambdaContext, service: Service
) -> None:
    # Given data indexed, then an embedder that is down
    call(observations_app, load_event("api/observations_post"), lambda_context)
    set_service(_service_with(FailingEmbedder(), settings))
    # When searching in hybrid mode, Then lexical answers and the reply says what degraded
    status, reply = search({"query": "deploy failed"}, lambda_context)
    assert status == 200 and reply["results"]
    assert reply["degraded"] == ["vector:skipped (embedding failed)", "rerank:balanced->fast (Cohere not configured)"]
    # When searching in semantic mode, Then 503 with Retry-After
    raw = search_app.lambda_handler(api_event("api/search_post", {"query": "q", "mode": "semantic"}), lambda_context)
    assert raw["statusCode"] == 503
    headers = {**raw.get("headers", {}), **{k: v[0] for k, v in (raw.get("multiValueHeaders") or {}).items()}}
    assert "Retry-After" in headers


def test_keyword_mode_works_without_any_embedder(settings: Settings, lambda_context: LocalLambdaContext) -> None:
    # Given a service with no embedder at all
    set_service(_service_with(None, settings))
    try:
        _, ingested = ingest(json.loads(load_event("api/observations_post")["body"]), lambda_context)
        # When searching by keyword, Then it answers
        status, reply = search({"query": "deploy failed", "mode": "keyword"}, lambda_context)
        assert ingested["created"] == 5 and status == 200 and reply["results"]
        # And semantic search says why it cannot answer
        status, reply = search({"query": "deploy failed", "mode": "semantic"}, lambda_context)
        assert status == 400 and reply["error"]["details"][0]["field"] == "mode"
    finally:
        set_service(None)


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({"NM_STORE": "opensearch"}, "NM_OPENSEARCH_URL"),
        ({"NM_TIER_BOOSTS": '{"A": "high"}'}, "NM_TIER_BOOSTS"),
        ({"NM_TIER_BOOSTS": "{not json"}, "tier_boosts"),
        ({"NM_EMBEDDER": "word2vec"}, "NM_EMBEDDER"),
    ],
)
def test_a_broken_configuration_answers_the_503_envelope_with_the_request_id(
    variables: dict[str, str], named: str, monkeypatch: pytest.MonkeyPatch, lambda_context: LocalLambdaContext
) -> None:
    # Given a function whose environment cannot work (the service is built on first request)
    from neural_memory.settings import get_settings

    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    set_service(None)
    try:
        # When a request arrives through the real handler
        event = load_event("api/search_post")
        reply = search_app.lambda_handler(event, lambda_context)
    finally:
        get_settings.cache_clear()
    # Then it is the JSON envelope with 503, the request id and the variable named; never a crash (502)
    body = json.loads(reply["body"])
    assert reply["statusCode"] == 503 and reply["headers"]["Retry-After"] == "60"
    assert body["error"]["code"] == "configuration_error" and named in body["error"]["message"]
    assert body["requestId"] == event["requestContext"]["requestId"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"query": "deploy \\ud800 failed"}', "query"),
        ('{"query": "x", "filters": {"actorNames": ["\\udfff"]}}', "filters.actorNames.0"),
        ('{"query": "x", "\\ud800": 1}', "body"),
        ('{"query": "x", "filters": ' + "[" * 100 + "]" * 100 + "}", "filters.0.0..."),
        ("[" * 100_000 + "]" * 100_000, "body"),
        # Python refuses to convert an integer of over 4,300 digits (a bare ValueError: was a 500)
        ('{"query": "x", "topK": ' + "7" * 4301 + "}", "body"),
        ('{"query": "x", "filters": {"metadata": {"pr": -' + "1" * 5000 + "}}}", "body"),
    ],
)
def test_json_that_cannot_be_served_is_a_400_naming_where(
    service: Service, lambda_context: LocalLambdaContext, body: str, field: str
) -> None:
    # Given JSON that parses but holds a lone surrogate, or nests absurdly deep
    status, reply = search(body, lambda_context)
    # Then 400 naming where, never a 500
    assert status == 400, reply
    assert reply["error"]["code"] == "validation_error" and reply["error"]["details"][0]["field"] == field


@pytest.mark.parametrize(
    "occurred_at",
    [
        "9999-12-31T23:59:59-14:00",
        "0001-01-01T00:00:00+01:00",
        1765700000,
        "2025-12-14T10:00:00",
        # Before the epoch (was acknowledged, then purged by the next maintenance), and Unix
        # seconds as a string (pydantic reads them as UTC, though a zone is required)
        "0001-01-01T00:00:00Z",
        "1969-12-31T23:59:59Z",
        "1700000000",
        " 1700000000.5 ",
    ],
)
def test_a_time_that_could_be_stored_but_never_read_is_refused(
    service: Service, lambda_context: LocalLambdaContext, occurred_at: object
) -> None:
    # Given an observation whose time is before the epoch or out of UTC's years 1..9999, a number
    # (even as a string), or has no zone
    body = {"observations": [{"source": "manual", "observationType": "note", "title": "t", "occurredAt": occurred_at}]}
    # When it is posted, Then 400 naming the field, and the workspace still answers reads
    status, reply = ingest(body, lambda_context)
    assert status == 400 and reply["error"]["details"][0]["field"] == "observations.0.occurredAt", reply
    assert search({"query": "t"}, lambda_context)[0] == 200


def test_the_last_representable_day_is_stored_and_read_back(
    service: Service, lambda_context: LocalLambdaContext
) -> None:
    # Given a collaborative (C-tier, expiring) observation on the last day of year 9999
    body = {
        "observations": [
            {
                "id": "last",
                "source": "github",
                "observationType": "issue_opened",
                "title": "edge",
                "occurredAt": "9999-12-31T00:00:00Z",
            }
        ]
    }
    assert ingest(body, lambda_context)[0] == 200
    # Then searching and reading it work
    status, found = search({"query": "edge"}, lambda_context)
    assert status == 200 and [r["id"] for r in found["results"]] == ["last"]


@pytest.mark.parametrize(
    ("content_type", "status"),
    [
        ("application/json", 200),
        ("APPLICATION/JSON", 200),
        ("Application/Json; charset=UTF-8", 200),
        ("application/x-www-form-urlencoded", 200),  # curl -d without -H
        ("text/plain", 415),
    ],
)
def test_media_types_are_case_insensitive(
    service: Service, lambda_context: LocalLambdaContext, content_type: str, status: int
) -> None:
    event = api_event("api/search_post", {"query": "deploy"})
    event["headers"] = {**event["headers"], "Content-Type": content_type}
    event["multiValueHeaders"] = {**(event.get("multiValueHeaders") or {}), "Content-Type": [content_type]}
    assert call(search_app, event, lambda_context)[0] == status


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("search", {"query": "deploy", "top_k": 5}, "top_k"),
        ("search", {"query": "deploy", "filters": {"source_types": ["github"]}}, "filters.source_types"),
        (
            "observations",
            {
                "observations": [
                    {"source": "m", "observation_type": "note", "title": "t", "occurredAt": "2025-12-14T10:00:00Z"}
                ]
            },
            "observations.0.observation_type",
        ),
    ],
)
def test_only_the_documented_camel_case_names_are_accepted(
    service: Service, lambda_context: LocalLambdaContext, route: str, body: dict[str, Any], field: str
) -> None:
    # Given a body that names a field in snake_case (the code's name, not the API's)
    status, reply = (search if route == "search" else ingest)(body, lambda_context)
    # Then 400 naming it: one spelling per field, as documented
    assert status == 400 and field in [d["field"] for d in reply["error"]["details"]], reply
