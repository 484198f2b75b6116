"""The authorizer (DynamoDB through moto), the SQS ingest consumer and the maintenance function,
each driven by its sample event from events/."""

from __future__ import annotations

import copy
import json
import threading
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, cast

import boto3
import pytest
from moto import mock_aws
from neural_memory.auth.dynamodb import DynamoKeyStore
from neural_memory.auth.keys import INVALID_KEY, NOT_BEARER, issue_key, revoke
from neural_memory.auth.process_keys import set_key_store
from neural_memory.clock import utcnow
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.settings import get_settings
from neural_memory.stores.base import read_one
from neural_memory.stores.sqlite.store import SqliteStore

from functions.authorizer import app as authorizer_app
from functions.ingest import app as ingest_app
from functions.maintenance import app as maintenance_app
from tests.helpers.events import load_event
from tests.helpers.fakes import FailingEmbedder, HashEmbedder
from tests.helpers.pipeline import NOW, note
from tests.helpers.stored_chunks import stored_chunks

if TYPE_CHECKING:
    from collections.abc import Iterator

    from aws_lambda_powertools.utilities.typing import LambdaContext
    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.aws]
# The agents of acme put events with the source neural-memory.acme (README, "Agents on the bus").
ROUTES = {"github:acme/console": "acme", "vercel:team_3Qp9kZ2mW8xV1nB4": "acme", "neural-memory:acme": "acme"}


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[DynamoKeyStore]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("NM_KEY_STORE", "dynamodb")
    monkeypatch.setenv("NM_KEYS_TABLE", "api-keys")
    get_settings.cache_clear()
    with mock_aws():
        boto3.client("dynamodb").create_table(
            TableName="api-keys",
            KeySchema=[{"AttributeName": "key_id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "key_id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        set_key_store(None)  # the authorizer builds its own from the settings: DynamoDB
        yield DynamoKeyStore("api-keys")
    set_key_store(None)
    get_settings.cache_clear()


def _authorize(key: str, context: LocalLambdaContext) -> dict[str, Any]:
    event = copy.deepcopy(load_event("authorizer/request"))
    event["headers"] = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    result: dict[str, Any] = authorizer_app.lambda_handler(event, cast("LambdaContext", context))
    return result


def test_authorizer_allows_a_valid_key_with_its_workspace(
    keys: DynamoKeyStore, lambda_context: LocalLambdaContext
) -> None:
    # Given a key issued into DynamoDB (only its hash is stored)
    key = issue_key(keys, "acme", utcnow())
    stored = boto3.client("dynamodb").scan(TableName="api-keys")["Items"][0]
    assert key.split("_", 2)[2] not in str(stored)  # the secret (base64url: it may hold "_" itself)
    # When the authorizer sees it as a bearer token
    policy = _authorize(key, lambda_context)
    # Then it allows, with the workspace (and the key's id: who acts) in the context the handlers
    # read, every route of the API (API Gateway reuses the cached policy for the key's next calls,
    # whatever their route)
    key_id = key.split("_")[1]
    assert policy["principalId"] == "acme" and policy["context"] == {
        "workspaceId": "acme",
        "keyId": key_id,
        "keyName": "acme",
        "role": "write",
    }
    statement = policy["policyDocument"]["Statement"][0]
    assert statement["Effect"] == "Allow" and statement["Action"] == "execute-api:Invoke"
    assert statement["Resource"] == ["arn:aws:execute-api:us-east-1:123456789012:k3x9q2w7e1/v1/*/*"], statement


def test_a_key_stored_before_names_and_roles_is_a_write_key_named_after_its_workspace(
    keys: DynamoKeyStore, lambda_context: LocalLambdaContext
) -> None:
    # Given a key's item as the keys table held it before names and roles (no name, role or last use)
    key = issue_key(keys, "acme", utcnow())
    key_id = key.split("_")[1]
    client = boto3.client("dynamodb")
    client.update_item(TableName="api-keys", Key={"key_id": {"S": key_id}}, UpdateExpression="REMOVE #n, #r",
                       ExpressionAttributeNames={"#n": "name", "#r": "role"})  # fmt: skip
    # And a read key beside it
    reader = issue_key(keys, "acme", utcnow(), name="rita", role="read")
    # When the authorizer sees each
    old, read = _authorize(key, lambda_context), _authorize(reader, lambda_context)
    # Then the old key acts as a write key named after its workspace, the read key as itself
    assert (old["context"]["keyName"], old["context"]["role"]) == ("acme", "write")
    assert (read["context"]["keyName"], read["context"]["role"]) == ("rita", "read")
    # And keys list shows both, with when each was last used (the authorizer's one write)
    listed = {(r.caller.name, r.caller.role): r.last_used_at for r in keys.list_keys("acme")}
    assert set(listed) == {("acme", "write"), ("rita", "read")} and all(listed.values())
    item = client.get_item(TableName="api-keys", Key={"key_id": {"S": key_id}})["Item"]
    assert set(item) == {"key_id", "workspace_id", "secret_sha256", "created_at", "last_used_at"}


def test_authorizer_refuses_unknown_and_revoked_keys(keys: DynamoKeyStore, lambda_context: LocalLambdaContext) -> None:
    key = issue_key(keys, "acme", utcnow())
    assert revoke(keys, key, utcnow())
    # A Deny saying why, which API Gateway's ACCESS_DENIED response answers as a 401 with that message
    for presented, why in ((key, INVALID_KEY), ("nm_000000000000_" + "A" * 43, INVALID_KEY), ("", NOT_BEARER)):
        policy = _authorize(presented, lambda_context)
        assert [s["Effect"] for s in policy["policyDocument"]["Statement"]] == ["Deny"], presented
        assert policy["context"] == {"message": why}, presented


@pytest.fixture
def ingest_service(settings: Settings) -> Iterator[Service]:
    routed = settings.model_copy(update={"ingest_routes": ROUTES})
    service = Service(SqliteStore(routed.sqlite_path), HashEmbedder(), routed, clock=lambda: NOW)
    set_service(service)
    yield service
    set_service(None)


def test_ingest_batch_reports_exactly_the_poison_records(
    ingest_service: Service, lambda_context: LocalLambdaContext, caplog: pytest.LogCaptureFixture
) -> None:
    # Given four SQS records: a push and a deployment error of routed sources, malformed JSON,
    # and a push from a repository no workspace is configured for
    event = load_event("sqs/ingest_batch")
    # When the consumer processes the batch
    reply = ingest_app.lambda_handler(event, lambda_context)
    # Then exactly the two poison records are reported, and the two good ones are indexed
    failed = [f["itemIdentifier"] for f in reply["batchItemFailures"]]
    assert failed == [event["Records"][2]["messageId"], event["Records"][3]["messageId"]]
    # And the log says why each failed, by its message id (the DLQ keeps the record, not the reason)
    logged = [r.__dict__ for r in caplog.records if r.getMessage() == "record failed"]
    reasons = {line["messageId"]: line["reason"] for line in logged}
    assert set(reasons) == set(failed), logged
    assert "no workspace is configured" in reasons[event["Records"][3]["messageId"]]
    assert ingest_service.store.count("acme") == 2
    # When SQS redelivers the same batch, Then nothing is duplicated
    ingest_app.lambda_handler(event, lambda_context)
    assert ingest_service.store.count("acme") == 2


def test_an_embedding_outage_fails_only_the_affected_records_and_a_retry_completes(
    settings: Settings, lambda_context: LocalLambdaContext
) -> None:
    # Given a batch of a push and a deployment error (E tier: never embedded) and a merged PR
    # (C tier: embedded), while the embedding provider is down
    routed = settings.model_copy(update={"ingest_routes": ROUTES})
    event = load_event("sqs/ingest_batch")
    event["Records"][2]["body"] = json.dumps(load_event("eventbridge/github_pull_request"))
    event["Records"] = event["Records"][:3]
    set_service(Service(SqliteStore(routed.sqlite_path), FailingEmbedder(), routed, clock=lambda: NOW))
    try:
        # When the batch is processed, Then only the record that needed the embedder fails
        reply = ingest_app.lambda_handler(event, lambda_context)
        assert [f["itemIdentifier"] for f in reply["batchItemFailures"]] == [event["Records"][2]["messageId"]]
        # When the provider is back and SQS retries the failed record
        healthy = Service(SqliteStore(routed.sqlite_path), HashEmbedder(), routed, clock=lambda: NOW)
        set_service(healthy)
        retry = {"Records": [event["Records"][2]]}
        assert ingest_app.lambda_handler(retry, lambda_context)["batchItemFailures"] == []
        # Then all three are indexed once
        assert healthy.store.count("acme") == 3
    finally:
        set_service(None)


@pytest.fixture
def cloudformation() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A local stand-in for the pre-signed ResponseURL: records every PUT body."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:  # http.server's naming
            length = int(self.headers["Content-Length"])
            received.append(json.loads(self.rfile.read(length)))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/response", received
    server.shutdown()
    server.server_close()


def _custom_resource(request_type: str, response_url: str) -> dict[str, Any]:
    event = load_event("cloudformation/index_create")
    event.update(RequestType=request_type, ResponseURL=response_url)
    if request_type != "Create":
        event["PhysicalResourceId"] = "index:neural-memory"
    return event


def test_maintenance_bootstraps_and_purges(
    settings: Settings, lambda_context: LocalLambdaContext, cloudformation: tuple[str, list[dict[str, Any]]]
) -> None:
    # Given the embedded store (which needs no index) and one expired chat
    url, received = cloudformation
    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    set_service(service)
    try:
        # When CloudFormation creates the index resource, Then the bootstrap answers; when the schedule fires, it purges
        created = maintenance_app.lambda_handler(_custom_resource("Create", url), lambda_context)
        assert created["PhysicalResourceId"] == "index:neural-memory" and created["Data"] == {"Outcome": "ok"}
        # And CloudFormation heard it at the ResponseURL, for the request it made
        assert received == [created] and created["Status"] == "SUCCESS"
        assert created["RequestId"] == load_event("cloudformation/index_create")["RequestId"]
        chat = note("old", "old chat", observation_type="conversation_turn", occurred_at=NOW - timedelta(days=1))
        service.index("acme", [chat])  # embedded: within its window at NOW
        # (and archives E observations older than 30 days: none here); the schedule runs today,
        # past the chat's window: its vectors go, the chat stays
        done = maintenance_app.lambda_handler(load_event("schedule/purge"), lambda_context)
        assert done == {"purged": 0, "archived": 0, "unembedded": 1}
        assert read_one(service.store, "acme", "old") is not None
    finally:
        set_service(None)


def test_a_failed_bootstrap_is_reported_to_cloudformation_and_delete_always_succeeds(
    monkeypatch: pytest.MonkeyPatch,
    lambda_context: LocalLambdaContext,
    cloudformation: tuple[str, list[dict[str, Any]]],
) -> None:
    # Given a function whose configuration cannot work (OpenSearch without an endpoint)
    url, received = cloudformation
    monkeypatch.setenv("NM_STORE", "opensearch")
    get_settings.cache_clear()
    set_service(None)
    try:
        # When CloudFormation creates, then deletes the resource
        maintenance_app.lambda_handler(_custom_resource("Create", url), lambda_context)
        maintenance_app.lambda_handler(_custom_resource("Delete", url), lambda_context)
    finally:
        get_settings.cache_clear()
        set_service(None)
    # Then the create fails with the reason (the stack rolls back now, not after an hour), and the
    # delete succeeds without touching the index, so a broken stack can always be removed
    assert [r["Status"] for r in received] == ["FAILED", "SUCCESS"]
    assert "NM_OPENSEARCH_URL" in received[0]["Reason"]
    assert received[1]["PhysicalResourceId"] == "index:neural-memory"


def _on_the_bus(detail: dict[str, Any], time: str) -> dict[str, Any]:
    """An SQS record carrying an agent's conversation_turn event (events/eventbridge), as the bus delivers it."""
    event = load_event("eventbridge/conversation_turn") | {"time": time}
    event["detail"] = detail
    record = copy.deepcopy(load_event("sqs/ingest_batch")["Records"][0])
    record["messageId"] = f"turn-{detail['id']}"
    record["body"] = json.dumps(event)
    return {"Records": [record]}


def test_two_turns_an_agent_puts_on_the_bus_one_by_one_give_the_second_its_context(
    ingest_service: Service, lambda_context: LocalLambdaContext
) -> None:
    # Given the sample conversation_turn event (workspace acme in its source), and the turn before it
    sample = load_event("eventbridge/conversation_turn")["detail"]
    question = {"id": "turn-sess-77-3", "content": "Why did the production deploy fail?", "actorName": "alice",
                "sessionId": sample["sessionId"]}  # fmt: skip
    # When the agent puts the question, then the sample answer, each delivered in a batch of its own
    for detail, time in ((question, "2025-12-13T10:14:00Z"), (sample, "2025-12-13T10:15:00Z")):
        assert ingest_app.lambda_handler(_on_the_bus(detail, time), lambda_context)["batchItemFailures"] == []
    # Then the answer has its own chunk, its title's passage (the agent titled it) and a context
    # chunk (searched both ways) with the question before it
    own, titled, context = stored_chunks(ingest_service.store, "acme", sample["id"])
    assert own == (sample["content"], True, True) and titled == ("", True, False)
    passage = f"alice: {question['content']}\nsupport-bot: {sample['content']}"
    assert context == (passage, True, True)
    # And the question, first in its session, has none
    assert len(stored_chunks(ingest_service.store, "acme", question["id"])) == 1
