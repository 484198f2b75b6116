"""One record the domain refuses never fails its batch: the SQS consumer, as Lambda runs it, over an
OpenSearch store behind an HTTP hop that answers as an AWS domain does (413 for a request over its
size limit, 400 for one poisoned document). Only the refused records' messages come back, each
with the reason; the good ones are stored once."""

from __future__ import annotations

import copy
import json
import logging
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.base import read_one
from neural_memory.stores.opensearch.index import OpenSearchAdmin
from neural_memory.stores.opensearch.store import OpenSearchStore
from opensearchpy import OpenSearch

from functions.ingest import app as ingest_app
from functions.observations import app as observations_app
from tests.helpers.events import NOW, api_event, load_event
from tests.helpers.fakes import HashEmbedder
from tests.helpers.opensearch_faults import POISON, FaultyDomain

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.local.serving.gateway import LocalLambdaContext

pytestmark = pytest.mark.integration
ROUTES = {"github:acme/console": "acme", "vercel:team_3Qp9kZ2mW8xV1nB4": "acme", "neural-memory:acme": "acme"}
DOMAIN_LIMIT = 60_000  # bytes per request the domain accepts (10 MiB on a small AWS instance type)


@pytest.fixture
def domain(osmem_url: str) -> Iterator[FaultyDomain]:
    faulty = FaultyDomain(osmem_url, max_body=DOMAIN_LIMIT)
    yield faulty
    faulty.shutdown()


@pytest.fixture
def service(domain: FaultyDomain, tmp_path: Path) -> Iterator[Service]:
    settings = Settings(data_dir=tmp_path, store="opensearch", ingest_routes=ROUTES)
    client = OpenSearch(hosts=[domain.url])
    embedder = HashEmbedder()
    OpenSearchAdmin(client, "nm").ensure_index(embedder.dimension, embedder.model_id)
    # Requests of up to 40 kB: under the domain's limit, so only a document larger than it is refused
    store = OpenSearchStore(client, "nm", refresh="true", bulk_max_bytes=40_000, single_index=True)
    svc = Service(store, embedder, settings, clock=lambda: NOW)
    set_service(svc)
    yield svc
    set_service(None)


def _note(note_id: str, content: str) -> str:
    event = copy.deepcopy(load_event("eventbridge/note"))
    event["detail"].update(id=note_id, title=f"Note {note_id}", content=content)
    return json.dumps(event)


def _batch() -> dict[str, Any]:
    template = load_event("sqs/ingest_batch")["Records"][0]
    bodies = [
        json.dumps(load_event("eventbridge/github_push")),
        _note("note-poisoned", f"A note the domain refuses to parse: {POISON}."),
        _note("note-oversized", "An enormous pasted log line. " * 3_000),  # ~90 kB: over the limit alone
        json.dumps(load_event("eventbridge/vercel_deployment_error")),
        _note("note-fine", "Remember to rotate the staging database password on Friday."),
    ]
    return {"Records": [{**template, "messageId": f"msg-{i}", "body": body} for i, body in enumerate(bodies)]}


def test_a_refused_document_fails_only_its_own_message(
    service: Service, domain: FaultyDomain, lambda_context: LocalLambdaContext, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a batch of five records, one of them poisoned (400) and one larger than a request may be (413)
    event = _batch()
    # When the consumer processes it
    with caplog.at_level(logging.WARNING):
        reply = ingest_app.lambda_handler(event, lambda_context)
    # Then exactly those two messages come back to SQS (towards the DLQ), the other three are stored
    assert [f["itemIdentifier"] for f in reply["batchItemFailures"]] == ["msg-1", "msg-2"]
    assert domain.requests_too_large >= 1
    assert service.store.count("acme") == 3
    assert read_one(service.store, "acme", "note-fine") is not None
    assert (
        read_one(service.store, "acme", "note-poisoned") is None
        and read_one(service.store, "acme", "note-oversized") is None
    )
    # And each failure names its reason in the function's log
    logged = caplog.text
    assert "failed to parse document" in logged and "over the domain's request size limit (413)" in logged
    # When SQS redelivers the whole batch, Then nothing is duplicated and the same two fail again
    again = ingest_app.lambda_handler(event, lambda_context)
    assert [f["itemIdentifier"] for f in again["batchItemFailures"]] == ["msg-1", "msg-2"]
    assert service.store.count("acme") == 3


def test_the_api_names_each_refused_observation_with_a_422(
    service: Service, lambda_context: LocalLambdaContext
) -> None:
    # Given two observations, one of which the domain refuses
    notes = [
        {
            "id": "ok-1",
            "source": "manual",
            "observationType": "note",
            "occurredAt": NOW.isoformat(),
            "content": "Fine.",
        },
        {
            "id": "bad-1",
            "source": "manual",
            "observationType": "note",
            "occurredAt": NOW.isoformat(),
            "content": POISON,
        },
    ]
    # When they are posted
    reply = observations_app.lambda_handler(api_event("api/observations_post", {"observations": notes}), lambda_context)
    # Then 422 names the refused one and its reason (never a 500); the other is stored
    body = json.loads(reply["body"])
    assert reply["statusCode"] == 422 and body["error"]["code"] == "store_rejected", body
    assert "bad-1: failed to parse document" in body["error"]["message"] and "(1 stored)" in body["error"]["message"]
    assert read_one(service.store, "acme", "ok-1") is not None and read_one(service.store, "acme", "bad-1") is None
