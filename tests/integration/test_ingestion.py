"""Ingestion loses nothing: poison records fail alone with reasons on both stores, redeliveries do
not duplicate, a provider outage fails only the affected records and a retry completes them,
EventBridge → SQS delivery (moto) feeds the consumer, the DLQ can be replayed, and local failure
reports can be replayed."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import boto3
import httpx
import pytest
from moto import mock_aws
from neural_memory.ingest.normalizers import event_sources
from neural_memory.local.ingest.dlq import redrive
from neural_memory.local.ingest.files import Loaded, load_file
from neural_memory.local.ingest.runner import ingest_loaded, read_failures, write_failures
from neural_memory.providers.embeddings.cohere import CohereEmbedder
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.stores.opensearch.index import OpenSearchAdmin
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.sqlite.store import SqliteStore
from opensearchpy import OpenSearch

from functions.ingest import app as ingest_app
from tests.helpers.events import EVENTS, load_event
from tests.helpers.fakes import FailingEmbedder, HashEmbedder
from tests.helpers.pipeline import NOW, note

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.aws]
ROUTES = {"github:acme/console": "acme", "vercel:team_3Qp9kZ2mW8xV1nB4": "acme"}
ROUTED_SAMPLES = [
    "github_push", "github_push_force", "github_pull_request", "github_pull_request_closed_unmerged",
    "github_issue_opened", "github_issue_comment", "github_release", "vercel_deployment_error",
    "vercel_deployment_succeeded",
]  # fmt: skip


def _sqs_event(bodies: list[Any]) -> dict[str, Any]:
    template = load_event("sqs/ingest_batch")["Records"][0]
    records = []
    for n, body in enumerate(bodies):
        record = dict(template, messageId=f"msg-{n}", body=body if isinstance(body, str) else json.dumps(body))
        records.append(record)
    return {"Records": records}


@pytest.fixture(params=["sqlite", "opensearch"])
def store(request: pytest.FixtureRequest, settings: Settings) -> Any:
    if request.param == "sqlite":
        return SqliteStore(settings.sqlite_path)
    client = OpenSearch(hosts=[request.getfixturevalue("osmem_url")])
    OpenSearchAdmin(client, "nm-ingest").ensure_index(64, HashEmbedder().model_id)
    return OpenSearchStore(client, "nm-ingest", refresh="true", single_index=True)


@pytest.fixture
def routed(settings: Settings) -> Settings:
    return settings.model_copy(update={"ingest_routes": ROUTES})


@pytest.fixture
def installed(store: Any, routed: Settings) -> Iterator[Service]:
    service = Service(store, HashEmbedder(), routed, clock=lambda: NOW)
    set_service(service)
    yield service
    set_service(None)


def test_n_events_with_k_poison_records_index_n_minus_k_and_report_k(
    installed: Service, lambda_context: LocalLambdaContext
) -> None:
    # Given nine routed, understood events and three poison records (malformed JSON, an unknown
    # GitHub event type, a repository no workspace is configured for)
    unrouted = load_event("eventbridge/github_push")
    unrouted["detail"]["repository"]["full_name"] = "stranger/repo"
    poison = ["{not json", load_event("eventbridge/github_star_unsupported"), unrouted]
    event = _sqs_event([load_event(f"eventbridge/{name}") for name in ROUTED_SAMPLES] + poison)
    # When the batch is processed
    reply = ingest_app.lambda_handler(event, lambda_context)
    # Then exactly the three poison records are reported and the nine others are indexed,
    # together: one embedding call for the batch, not one per record
    assert [f["itemIdentifier"] for f in reply["batchItemFailures"]] == ["msg-9", "msg-10", "msg-11"]
    assert installed.store.count("acme") == 9
    assert isinstance(installed.embedder, HashEmbedder) and len(installed.embedder.calls) == 1
    # When SQS delivers the same batch again, Then nothing is duplicated
    ingest_app.lambda_handler(event, lambda_context)
    assert installed.store.count("acme") == 9


def _cohere(state: dict[str, bool]) -> CohereEmbedder:
    def respond(request: httpx.Request) -> httpx.Response:
        if state["down"]:
            return httpx.Response(429, json={"message": "too many requests"})
        texts = json.loads(request.content)["texts"]
        vectors = [[1.0] + [0.0] * 1023 for _ in texts]
        return httpx.Response(200, json={"id": "e", "embeddings": {"float": vectors}, "texts": texts,
                                         "meta": {}, "response_type": "embeddings_by_type"})  # fmt: skip

    return CohereEmbedder(api_key="k", http_client=httpx.Client(transport=httpx.MockTransport(respond)))


def test_an_embedding_outage_mid_batch_fails_only_affected_records_and_a_retry_completes(
    routed: Settings, lambda_context: LocalLambdaContext
) -> None:
    # Given Cohere (real SDK, faked wire) answering 429, and a batch mixing never-embedded events
    # (push, deployment) with embedded ones (PR, issue)
    state = {"down": True}
    service = Service(SqliteStore(routed.sqlite_path), _cohere(state), routed, clock=lambda: NOW)
    set_service(service)
    try:
        names = ["github_push", "github_pull_request", "vercel_deployment_error", "github_issue_opened"]
        event = _sqs_event([load_event(f"eventbridge/{n}") for n in names])
        # When processed during the outage, Then only the embedded ones fail
        failed = [f["itemIdentifier"] for f in ingest_app.lambda_handler(event, lambda_context)["batchItemFailures"]]
        assert failed == ["msg-1", "msg-3"] and service.store.count("acme") == 2
        # When Cohere recovers and SQS retries just the failed records, Then all four are indexed once
        state["down"] = False
        retry = {"Records": [r for r in event["Records"] if r["messageId"] in failed]}
        assert ingest_app.lambda_handler(retry, lambda_context)["batchItemFailures"] == []
        assert service.store.count("acme") == 4
    finally:
        set_service(None)


def test_eventbridge_rules_deliver_to_the_queue_the_consumer_reads(
    routed: Settings, lambda_context: LocalLambdaContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        # Given the bus, a rule per source pattern the normalizers accept and the ingest queue, as
        # the stack wires them (the agents' family by EventBridge's prefix match)
        events, sqs = boto3.client("events"), boto3.client("sqs")
        events.create_event_bus(Name="neural-memory")
        queue_url = sqs.create_queue(QueueName="observations")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        for n, pattern in enumerate(event_sources()):
            events.put_rule(Name=f"r{n}", EventBusName="neural-memory", EventPattern=json.dumps({"source": [pattern]}))
            events.put_targets(Rule=f"r{n}", EventBusName="neural-memory", Targets=[{"Id": "q", "Arn": queue_arn}])
        # When GitHub and Vercel events, an agent's note, the retired bare agent source and an
        # unrelated event are put on the bus
        retired = {**load_event("eventbridge/note"), "source": "neural-memory"}
        entries = [load_event("eventbridge/github_push"), load_event("eventbridge/vercel_deployment_error"),
                   load_event("eventbridge/note"), retired,
                   {"source": "somebody.else", "detail-type": "x", "detail": {}}]  # fmt: skip
        put = [
            {"EventBusName": "neural-memory", "Source": e["source"], "DetailType": e["detail-type"],
             "Detail": json.dumps(e["detail"])}
            for e in entries
        ]  # fmt: skip
        events.put_events(Entries=put)
        messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10)["Messages"]
    # Then the three routed events reach the queue, and the consumer indexes them
    assert sorted(json.loads(m["Body"])["source"] for m in messages) == ["github", "neural-memory.acme", "vercel"]
    agents = routed.model_copy(update={"ingest_routes": {**ROUTES, "neural-memory:acme": "acme"}})
    service = Service(SqliteStore(agents.sqlite_path), HashEmbedder(), agents, clock=lambda: NOW)
    set_service(service)
    try:
        reply = ingest_app.lambda_handler(_sqs_event([m["Body"] for m in messages]), lambda_context)
        assert reply["batchItemFailures"] == [] and service.store.count("acme") == 3
    finally:
        set_service(None)


def test_dead_letters_are_replayed_to_the_ingest_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        sqs = boto3.client("sqs")
        dlq = sqs.create_queue(QueueName="dead")["QueueUrl"]
        main = sqs.create_queue(QueueName="observations")["QueueUrl"]
        bodies = [json.dumps(load_event("eventbridge/github_push")), "{poison", json.dumps({"n": 3})]
        for body in bodies:
            sqs.send_message(QueueUrl=dlq, MessageBody=body)
        # When the DLQ is replayed, Then every message moves, unchanged, and the DLQ is empty
        assert redrive(dlq, main, client=sqs) == 3
        moved = sqs.receive_message(QueueUrl=main, MaxNumberOfMessages=10)["Messages"]
        assert sorted(m["Body"] for m in moved) == sorted(bodies)
        assert "Messages" not in sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10)


def test_local_failure_report_is_replayable(settings: Settings, tmp_path: Path) -> None:
    # Given the sample folder ingested while the embedder is down
    loaded = [item for path in sorted((EVENTS / "eventbridge").glob("*.json")) for item in load_file(path)]
    down = Service(SqliteStore(settings.sqlite_path), FailingEmbedder(), settings, clock=lambda: NOW)
    report = ingest_loaded(down, "acme", loaded, batch_size=4)
    reasons = {f.reason for f in report.failures}
    assert "GitHub event 'star' is not supported" in reasons and "embedding provider is down" in reasons
    path = tmp_path / "failures.jsonl"
    write_failures(path, report.failures)
    # When the report is replayed with the provider back
    healthy = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    again = ingest_loaded(healthy, "acme", read_failures(path))
    # Then everything but the event we never support is indexed, and that one fails again with its reason
    assert [f.reason for f in again.failures] == ["GitHub event 'star' is not supported"]
    assert healthy.store.count("acme") == 15


def test_a_bulk_ingest_fails_only_the_observation_at_fault(settings: Settings) -> None:
    # Given a stored decision that replaces another, and a batch of five where one would close a
    # supersession cycle with it
    svc = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    svc.index("acme", [note("a", "decision a", supersedes=["b"])])
    batch = [note(f"ok-{i}", f"note {i}") for i in range(4)] + [note("b", "decision b", supersedes=["a"])]
    loaded = [Loaded(origin=f"file.jsonl:{i}", observations=[o]) for i, o in enumerate(batch)]
    # When ingested in one batch
    report = ingest_loaded(svc, "acme", loaded, batch_size=10)
    # Then the four good ones are indexed and only the faulty one is reported, with the reason
    assert report.created == 4
    assert [(f.origin, "supersession cycle" in f.reason) for f in report.failures] == [("file.jsonl:4", True)]
    assert svc.store.count("acme") == 5
