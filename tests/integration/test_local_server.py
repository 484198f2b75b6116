"""The local server over real HTTP on loopback: health, auth, the README's search, and
schemathesis against the generated OpenAPI document finding no 5xx."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from neural_memory.local.demo import ensure_demo
from neural_memory.local.gateway import LocalGateway
from neural_memory.local.server import LocalApiServer
from neural_memory.service import Service, set_service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite import SqliteStore
from neural_memory.stores.sqlite_keys import SqliteKeyStore
from schemathesis.checks import not_a_server_error

from tests.helpers.events import EVENTS, NOW

if TYPE_CHECKING:
    from collections.abc import Iterator

    from neural_memory.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration


class Running:
    def __init__(self, url: str, key: str) -> None:
        self.url, self.key = url, key

    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        data = body if isinstance(body, bytes) else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # loopback only
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxLocalEmbedder) -> Iterator[Running]:
    """The local server on an ephemeral loopback port, set up as ``serve`` does on first start."""
    config = Settings(data_dir=tmp_path_factory.mktemp("serve"))
    service = Service(SqliteStore(config.sqlite_path), embedder, config, clock=lambda: NOW)
    set_service(service)
    keys = SqliteKeyStore(config.sqlite_path)
    demo = ensure_demo(service, keys, config.data_dir, EVENTS, NOW)
    assert demo.key and demo.loaded == 20  # 15 EventBridge samples that yield an observation + 5 API ones
    httpd = LocalApiServer(("127.0.0.1", 0), LocalGateway(keys), config.max_body_bytes, True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield Running(httpd.url, demo.key)
    httpd.shutdown()
    httpd.server_close()
    set_service(None)


def test_health_and_openapi(server: Running) -> None:
    assert server.request("GET", "/") == (200, {"status": "ok", "service": "neural-memory", "openapi": "/openapi.json"})
    status, document = server.request("GET", "/openapi.json")
    assert status == 200
    assert set(document["paths"]) == {"/v1/search", "/v1/answer", "/v1/observations", "/v1/observations/{id}"}


def test_readme_search_returns_sample_results_with_every_latency_key(server: Running) -> None:
    # Given the server started with the samples
    # When the README's curl search is sent
    status, body = server.request("POST", "/v1/search", {"query": "why did the deploy fail", "topK": 5}, server.auth())
    # Then it answers with sample observations and the full latency breakdown
    assert status == 200
    ids = [r["id"] for r in body["results"]]
    assert "note-deploy-env-vars" in ids and "vercel-uHp5NnBmQ3ZqX2p6TWd4" in ids
    assert set(body["latency"]) == {"total", "embed", "retrieval", "llmFilter", "rerank"}


def test_x_api_key_header_is_accepted(server: Running) -> None:
    status, _ = server.request("POST", "/v1/search", {"query": "deploy"}, {"x-api-key": server.key})
    assert status == 200


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer nm_000000000000_" + "A" * 43}, {"x-api-key": "nope"}]
)
def test_no_key_or_a_wrong_key_is_401(server: Running, headers: dict[str, str]) -> None:
    status, body = server.request("POST", "/v1/search", {"query": "deploy"}, headers)
    assert status == 401 and body["error"]["code"] == "unauthorized"


def test_unknown_route_404_wrong_method_405_big_body_413(server: Running) -> None:
    assert server.request("GET", "/v2/nothing", None, server.auth())[0] == 404
    assert server.request("GET", "/v1/search", None, server.auth())[0] == 405
    status, body = server.request("POST", "/v1/search", b"x" * 2_000_000, server.auth())
    assert status == 413 and body["error"]["code"] == "payload_too_large"


def test_observation_round_trip_over_http(server: Running) -> None:
    observation = {
        "id": "http-note",
        "source": "manual",
        "observationType": "note",
        "occurredAt": "2025-12-13T10:00:00Z",
        "title": "Blue-green deploys for the API",
        "content": "We switch traffic only after health checks pass.",
    }
    status, body = server.request("POST", "/v1/observations", {"observations": [observation]}, server.auth())
    assert (status, body["ids"]) == (200, ["http-note"])
    status, body = server.request("GET", "/v1/observations/http-note", None, server.auth())
    assert status == 200 and body["title"] == observation["title"]
    assert server.request("DELETE", "/v1/observations/http-note", None, server.auth())[0] == 200
    assert server.request("GET", "/v1/observations/http-note", None, server.auth())[0] == 404


def test_generated_requests_never_get_a_5xx(server: Running) -> None:
    # Given every operation of the generated OpenAPI document
    status, document = server.request("GET", "/openapi.json")
    assert status == 200
    operations = [result.ok() for result in schemathesis.openapi.from_dict(document).get_all_operations()]  # type: ignore[union-attr]
    assert len(operations) == 5
    headers = {"Authorization": f"Bearer {server.key}"}
    statuses: Counter[int] = Counter()
    for operation in operations:
        # When schemathesis generates requests for it (valid ones and edge cases) and sends them with a valid key
        @given(case=operation.as_strategy())
        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case: Any) -> None:
            # (schemathesis also generates auth headers from the security schemes; send the real key)
            case.headers = dict(headers)
            response = case.call_and_validate(base_url=server.url, checks=[not_a_server_error])
            statuses[response.status_code] += 1

        check()
    # And the generated requests really reached the handlers: successes and validation errors alike
    assert statuses[200] > 0 and statuses[400] > 0 and statuses[401] == 0
