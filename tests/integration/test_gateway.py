"""The local gateway is API Gateway's stand-in: the one route table, the authorizer Lambda's own
handler with the event API Gateway sends it, and the authorizer's context in the proxy event."""

from __future__ import annotations

import io
import json
import threading
from typing import TYPE_CHECKING

import pytest
from neural_memory.api.routes import ROUTES
from neural_memory.auth.factory import build_key_store
from neural_memory.auth.keys import issue_key, revoke
from neural_memory.clock import utcnow
from neural_memory.local.serving.gateway import LocalGateway, authorizer_event
from neural_memory.observability import logger
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.events import load_event
from tests.helpers.fakes import HashEmbedder

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Vector
    from neural_memory.providers.embeddings.base import InputType
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture
def gateway_and_key(service: Service) -> tuple[LocalGateway, str]:
    keys = build_key_store(service.settings)
    return LocalGateway(keys), issue_key(keys, "acme", utcnow())


def test_every_route_of_the_table_is_served_and_nothing_else(gateway_and_key: tuple[LocalGateway, str]) -> None:
    gateway, key = gateway_and_key
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    bodies = {"search": b'{"query": "x"}', "answer": b'{"question": "x"}', "observations": b'{"observations": []}'}
    bodies["webhooks"] = b"{}"
    for route in ROUTES:
        path = route.path.replace("{id}", "missing-id")
        reply = gateway.dispatch(route.method, path, headers, bodies[route.function] if route.has_body else b"")
        # A route's own function answered: 200, its validation (400), its not-found (404 with the
        # id), a webhook receiver refusing an unsigned delivery (401), or the stateless MCP
        # endpoint refusing a session's GET or DELETE (405, a JSON-RPC error), or the audit trail
        # refusing a write key (403: an admin's)
        if route.path == "/v1/audit":
            assert reply.status == 403 and json.loads(reply.body)["error"]["code"] == "forbidden", reply.body
            continue
        if route.path == "/mcp" and route.method != "POST":
            assert reply.status == 405 and json.loads(reply.body)["jsonrpc"] == "2.0", (route, reply.body)
            continue
        assert reply.status in {200, 400, 401, 404}, (route, reply.body)
        assert "no route" not in reply.body, route
    assert gateway.dispatch("GET", "/v1/nothing", headers, b"").status == 404
    assert gateway.dispatch("PUT", "/v1/search", headers, b"").status == 405


def test_the_authorizer_function_refuses_with_its_own_handler(
    gateway_and_key: tuple[LocalGateway, str], service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a revoked key
    gateway, key = gateway_and_key
    revoke(build_key_store(service.settings), key, utcnow())
    log = io.StringIO()
    monkeypatch.setattr(logger.registered_handler, "stream", log)
    # When it is presented, Then 401 in the envelope, and the refusal was logged by the authorizer Lambda
    reply = gateway.dispatch("POST", "/v1/search", {"Authorization": f"Bearer {key}"}, b'{"query": "deploy"}')
    body = json.loads(reply.body)
    assert reply.status == 401 and body["error"]["code"] == "unauthorized"
    logged = [json.loads(line) for line in log.getvalue().splitlines()]
    assert any(entry.get("function_name") == "authorizer" and "refused" in entry.get("message", "") for entry in logged)


def test_the_authorizer_event_has_the_shape_api_gateway_sends(gateway_and_key: tuple[LocalGateway, str]) -> None:
    proxy = load_event("api/search_post")
    event = authorizer_event(proxy)
    recorded = load_event("authorizer/request")
    assert set(event) == set(recorded) and event["type"] == "REQUEST"
    assert event["methodArn"].endswith(f"/POST{proxy['requestContext']['resourcePath']}")
    assert "authorizer" not in event["requestContext"]


def test_an_authorizer_that_fails_is_a_500_envelope_not_a_dropped_connection(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a key store the authorizer cannot reach (DynamoDB configured without a table name)
    monkeypatch.setenv("NM_KEY_STORE", "dynamodb")
    from neural_memory.auth.process_keys import set_key_store
    from neural_memory.settings import get_settings

    gateway = LocalGateway(build_key_store(service.settings))
    set_key_store(None)  # the authorizer builds its store from the (broken) settings
    get_settings.cache_clear()
    try:
        reply = gateway.dispatch("POST", "/v1/search", {"Authorization": "Bearer nm_000000000000_" + "A" * 43}, b"{}")
    finally:
        get_settings.cache_clear()
        set_key_store(None)
    # Then 500 with the envelope, as API Gateway answers when an authorizer fails
    assert reply.status == 500 and json.loads(reply.body)["error"]["code"] == "internal_error"


class _HeldEmbedder(HashEmbedder):
    """Embeds documents only once released: an ingest that takes as long as the test wants."""

    def __init__(self) -> None:
        super().__init__()
        self.started, self.release = threading.Event(), threading.Event()

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[Vector]:
        if input_type == "search_document":
            self.started.set()
            assert self.release.wait(30)
        return super().embed(texts, input_type)


def test_a_search_is_not_held_up_by_an_ingest_that_is_embedding(settings: Settings) -> None:
    # Given an ingest through the gateway whose embedding is in progress (held)
    embedder = _HeldEmbedder()
    service = Service(SqliteStore(settings.sqlite_path), embedder, settings)
    set_service(service)
    keys = build_key_store(settings)
    gateway, key = LocalGateway(keys), issue_key(keys, "acme", utcnow())
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    observation = {"source": "manual", "observationType": "note", "title": "held", "occurredAt": "2025-12-14T10:00:00Z"}
    note = json.dumps({"observations": [observation]}).encode()
    replies: list[int] = []
    ingest = threading.Thread(
        target=lambda: replies.append(gateway.dispatch("POST", "/v1/observations", headers, note).status)
    )
    ingest.start()
    try:
        assert embedder.started.wait(10)
        # When a search arrives meanwhile, Then it is answered while the ingest still waits
        search = gateway.dispatch("POST", "/v1/search", headers, b'{"query": "anything", "mode": "keyword"}')
        assert search.status == 200 and not replies
    finally:
        embedder.release.set()
        ingest.join(30)
        set_service(None)
    assert replies == [200]
