"""Issue 48, item 3: two observations with the same id in one batch, on both stores. The API refuses
the request, naming the later one's field (the Lambda handler, and the local gateway in front of
it); files and the ingest queue store the last copy and count every copy (docs/api.md)."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.auth.keys import issue_key
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.local.ingest.files import load_file
from neural_memory.local.ingest.runner import ingest_loaded
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.runtime import set_service
from neural_memory.settings import Settings
from neural_memory.stores.base import read_one

from functions.ingest import app as ingest_app
from tests.helpers.events import NOW, load_event
from tests.helpers.handlers import ingest
from tests.helpers.two_stores import svc  # noqa: F401  (the two-store fixture)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.service import Service

pytestmark = pytest.mark.integration
WS = "acme"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """The settings of ``svc``, with agents' events of workspace acme routed to it."""
    return Settings(data_dir=tmp_path, ingest_routes={"neural-memory:acme": WS})


@pytest.fixture
def installed(svc: Service) -> Iterator[Service]:  # noqa: F811
    """The two-store service, installed for the handlers."""
    set_service(svc)
    yield svc
    set_service(None)


def _note(note_id: str | None, content: str) -> dict[str, Any]:
    note = {"source": "manual", "observationType": "note", "occurredAt": "2025-12-12T10:00:00Z"}
    note |= {"title": "Billing retries", "content": content}
    return note | ({"id": note_id} if note_id else {})


def test_an_id_twice_in_a_request_is_a_400_naming_the_later_one_and_nothing_is_written(
    installed: Service, lambda_context: LocalLambdaContext
) -> None:
    # Given a batch whose second and fourth observations share an id
    batch = [_note("a", "first"), _note("b", "second"), _note("c", "third"), _note("b", "fourth")]
    # When it is posted to the observations function
    status, body = ingest({"observations": batch}, lambda_context)
    # Then it is a 400 naming observations.3.id and the earlier one, and nothing of the batch is stored
    assert status == 400, body
    assert body["error"]["code"] == "validation_error"
    assert body["error"]["details"][0]["field"] == "observations.3.id", body
    assert "observations.1" in body["error"]["message"], body
    assert installed.store.count(WS) == 0


def test_the_same_source_event_twice_is_a_400_naming_the_later_observation(
    installed: Service, lambda_context: LocalLambdaContext
) -> None:
    # Given two observations without an id, describing the same event (their derived ids agree)
    status, body = ingest({"observations": [_note(None, "same"), _note(None, "same")]}, lambda_context)
    # Then the later one is named
    assert status == 400 and body["error"]["details"][0]["field"] == "observations.1", body
    assert installed.store.count(WS) == 0


def test_the_local_gateway_refuses_the_same_way(installed: Service, tmp_path: Path) -> None:
    # Given the local gateway (what `serve` puts in front of the handlers) and a key
    keys = SqliteKeyStore(tmp_path / "keys.sqlite3")
    key = issue_key(keys, WS, NOW)
    gateway = LocalGateway(keys, concurrency=1)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    body = json.dumps({"observations": [_note("x", "one"), _note("x", "two")]}).encode()
    # When the batch with a repeated id is posted
    reply = gateway.dispatch("POST", "/v1/observations", headers, body)
    # Then it is the same 400
    assert reply.status == 400, reply.body
    assert json.loads(reply.body)["error"]["details"][0]["field"] == "observations.1.id"
    keys.close()


def test_a_file_with_an_id_three_times_stores_the_last_and_counts_each_copy(installed: Service, tmp_path: Path) -> None:
    # Given a JSON Lines file with the same id three times (a redelivered note) among other notes
    lines = [_note("r", "draft one"), _note("s", "other"), _note("r", "draft two"), _note("r", "final words")]
    source = tmp_path / "notes.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    # When it is ingested in batches of 64 (all in one) and again one observation per batch
    together = ingest_loaded(installed, WS, load_file(source))
    stored_together = read_one(installed.store, WS, "r")
    one_by_one = ingest_loaded(installed, "other", load_file(source), batch_size=1)
    # Then the last copy is stored, once, and created + updated is the number of lines either way
    assert stored_together is not None and stored_together.content == "final words"
    assert installed.store.count(WS) == 2
    assert (together.created, together.updated, together.failures) == (2, 2, [])
    assert (one_by_one.created, one_by_one.updated) == (2, 2)


def test_a_queue_batch_carrying_one_event_twice_stores_it_once(
    installed: Service, lambda_context: LocalLambdaContext
) -> None:
    # Given an SQS batch with the same note delivered twice (EventBridge's at-least-once delivery)
    # and another note
    template = load_event("sqs/ingest_batch")["Records"][0]
    note = load_event("eventbridge/note")
    later = copy.deepcopy(note)
    later["detail"]["content"] = "The checklist as edited later."
    other = copy.deepcopy(note)
    other["detail"].update(id="note-other", title="Another note")
    bodies = [json.dumps(note), json.dumps(other), json.dumps(later)]
    event = {"Records": [{**template, "messageId": f"msg-{i}", "body": b} for i, b in enumerate(bodies)]}
    # When the consumer processes it
    reply = ingest_app.lambda_handler(event, lambda_context)
    # Then every message is done, and the note is stored once, as last delivered
    assert reply["batchItemFailures"] == []
    stored = read_one(installed.store, WS, "note-release-checklist")
    assert stored is not None and stored.content == "The checklist as edited later."
    assert installed.store.count(WS) == 2
