"""The local server over real HTTP on loopback: health, auth, the README's search, and
schemathesis against the generated OpenAPI document finding no 5xx."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from neural_memory.api.routes import ROUTES
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.local.serving.server import LocalApiServer
from neural_memory.settings import Settings
from schemathesis.checks import not_a_server_error

from tests.helpers.events import EVENTS
from tests.helpers.local_api import running_local_api

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

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
    with running_local_api(tmp_path_factory.mktemp("serve"), embedder, EVENTS) as api:
        assert api.loaded == 20  # 15 EventBridge samples that yield an observation + 5 API ones
        yield Running(api.url, api.key)


def test_health_and_openapi(server: Running) -> None:
    status, health = server.request("GET", "/")
    assert status == 200 and health["status"] == "ok" and health["openapi"] == "/openapi.json", health
    # and what the server's connection guard has done (issue 48)
    assert health["connections"]["dropped"] == {"headTimeout": 0, "requestTimeout": 0, "atLimit": 0}, health
    status, document = server.request("GET", "/openapi.json")
    assert status == 200
    assert set(document["paths"]) == {route.path for route in ROUTES}


def test_readme_search_returns_sample_results_with_every_latency_key(server: Running) -> None:
    # Given the server started with the samples
    # When the README's curl search is sent
    status, body = server.request("POST", "/v1/search", {"query": "why did the deploy fail", "topK": 5}, server.auth())
    # Then it answers with sample observations and the full latency breakdown
    assert status == 200
    ids = [r["id"] for r in body["results"]]
    assert "note-deploy-env-vars" in ids and "vercel-dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx-error" in ids
    assert set(body["latency"]) == {"total", "embed", "retrieval", "llmFilter", "rerank"}


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer nm_000000000000_" + "A" * 43}, {"x-api-key": "nope"}, {"x-api-key": "valid"}],
)
def test_no_key_or_a_wrong_key_is_401(server: Running, headers: dict[str, str]) -> None:
    # A valid key in another header than the one AWS's authorizer cache reads is refused here too
    headers = {name: server.key if value == "valid" else value for name, value in headers.items()}
    status, body = server.request("POST", "/v1/search", {"query": "deploy"}, headers)
    assert status == 401 and body["error"]["code"] == "unauthorized"


def test_each_refused_key_is_told_what_is_wrong_with_it(server: Running) -> None:
    # Given a request with no key, one with the key but not as "Bearer <key>", and one with a wrong key
    cases = {
        "missing": {},
        "no bearer": {"Authorization": server.key},
        "wrong": {"Authorization": "Bearer nm_000000000000_" + "A" * 43},
    }
    messages = {}
    for case, headers in cases.items():
        status, body = server.request("POST", "/v1/search", {"query": "deploy"}, headers)
        assert status == 401 and body["error"]["code"] == "unauthorized", (case, body)
        messages[case] = body["error"]["message"]
    # Then each 401 says its own problem
    assert "no API key" in messages["missing"], messages
    assert "'Bearer <key>'" in messages["no bearer"], messages
    assert "unknown or revoked API key" in messages["wrong"], messages
    assert len(set(messages.values())) == 3, messages


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


def test_facets_over_http_count_the_samples_and_name_a_bad_parameter(server: Running) -> None:
    # Given the samples: When facets are asked under one source, Then the other sources keep their
    # counts (a field is counted without its own filter), and the total is that source's
    status, body = server.request("GET", "/v1/facets?sourceTypes=vercel", None, server.auth())
    assert status == 200, body
    sources = {c["value"]: c["count"] for c in body["facets"]["sourceTypes"]}
    assert {"github", "vercel"} <= set(sources) and body["total"] == sources["vercel"]
    assert {c["value"] for c in body["facets"]["observationTypes"]} >= {"deployment_error"}
    # Several values of one field by repeating the parameter; limit caps the values per field
    status, both = server.request(
        "GET", "/v1/facets?sourceTypes=vercel&sourceTypes=github&limit=1", None, server.auth()
    )
    assert status == 200 and both["total"] == sources["vercel"] + sources["github"]
    assert all(len(values) <= 1 for values in both["facets"].values())
    # When a parameter is wrong, Then 400 naming it; without a key, 401
    for query, field in (("tiers=Z", "tiers"), ("limit=0", "limit"), ("start=yesterday", "start")):
        status, body = server.request("GET", f"/v1/facets?{query}", None, server.auth())
        assert status == 400 and body["error"]["details"][0]["field"].startswith(field), (query, body)
    late = "start=2025-12-13T00:00:00Z&end=2025-12-01T00:00:00Z"
    status, body = server.request("GET", f"/v1/facets?{late}", None, server.auth())
    assert status == 400 and body["error"]["details"][0]["field"] == "start", body
    assert server.request("GET", "/v1/facets", None, {})[0] == 401


def test_facets_name_their_counts_as_the_filters_and_keep_the_first_names_for_a_release(server: Running) -> None:
    # When facets are asked with the filters' names
    status, body = server.request("GET", "/v1/facets?sources=github", None, server.auth())
    assert status == 200, body
    # Then each count is named as the filter it feeds, and the first names still carry the same counts
    assert set(body["facets"]) == {"sources", "observationTypes", "actors", "tiers", "sourceTypes", "actorNames"}
    assert body["facets"]["sources"] == body["facets"]["sourceTypes"]
    assert body["facets"]["actors"] == body["facets"]["actorNames"] != []
    actor = body["facets"]["actors"][0]["value"]
    # And `actors` filters as `actorNames` does (in facets and in a search), never both at once
    status, by_actor = server.request("GET", f"/v1/facets?actors={actor}", None, server.auth())
    assert status == 200 and by_actor == {
        **server.request("GET", f"/v1/facets?actorNames={actor}", None, server.auth())[1],
        "requestId": by_actor["requestId"],
        "latency": by_actor["latency"],
    }
    status, body = server.request("GET", f"/v1/facets?actors={actor}&actorNames={actor}", None, server.auth())
    assert status == 400 and body["error"]["details"][0]["field"] == "actorNames", body
    search = {"query": "deploy", "filters": {"actors": [actor]}}
    status, found = server.request("POST", "/v1/search", search, server.auth())
    assert status == 200 and found["results"] and {r["actorName"] for r in found["results"]} == {actor}


@pytest.mark.parametrize(
    ("request_line", "name"),
    [
        ("GET /v1/facets?sourceType=github", "sourceType"),
        ("GET /v1/experts?q=deploy&sourceType=github", "sourceType"),
        ("GET /v1/observations/note-deploy-env-vars/lineage?limits=3", "limits"),
        ("GET /v1/observations/note-deploy-env-vars?expand=observation", "expand"),
        ("POST /v1/search?topK=3", "topK"),
    ],
)
def test_an_unknown_query_parameter_is_a_400_naming_it(server: Running, request_line: str, name: str) -> None:
    # Given a query string with a parameter the route does not take (a typo, or a body field)
    method, path = request_line.split(" ", 1)
    body = {"query": "deploy"} if method == "POST" else None
    # When sent, Then 400 naming it (as an unknown body field is), never 200 as if it were not there
    status, reply = server.request(method, path, body, server.auth())
    assert status == 400, reply
    assert reply["error"]["code"] == "validation_error" and reply["error"]["details"][0]["field"] == name, reply
    assert reply["error"]["message"].startswith(f"{name}: unknown query parameter"), reply


def test_the_console_page_keeps_its_state_in_the_query_string(server: Running) -> None:
    # The page's own query string is the browser's state (filters), not an API parameter
    assert _fetch(server.url + "/console?q=deploy&sourceTypes=github")[0] == 200


STAGES = {"total", "embed", "retrieval", "llmFilter", "rerank"}


def test_every_reply_carries_one_latency_shape_as_the_readme_says(server: Running) -> None:
    # Given the README's promise: every reply carries latency (total, embed, retrieval, llmFilter,
    # rerank, integer ms) and degraded; those that search, llm (whether the gate ran, and why not)
    replies = {
        "search": server.request("POST", "/v1/search", {"query": "deploy failure"}, server.auth()),
        "answer": server.request("POST", "/v1/answer", {"question": "Why did the deploy fail?"}, server.auth()),
        "experts GET": server.request("GET", "/v1/experts?q=deploy+failure", None, server.auth()),
        "experts POST": server.request("POST", "/v1/experts", {"query": "deploy failure"}, server.auth()),
        "facets": server.request("GET", "/v1/facets", None, server.auth()),
    }
    for name, (status, reply) in replies.items():
        # Then each has the same stages, as integers, the total at least their sum; an answer adds generate
        assert status == 200, (name, reply)
        latency = reply["latency"]
        assert set(latency) == STAGES | ({"generate"} if name == "answer" else set()), (name, latency)
        assert all(isinstance(ms, int) and ms >= 0 for ms in latency.values()), (name, latency)
        assert latency["total"] >= sum(ms for stage, ms in latency.items() if stage != "total"), (name, latency)
        assert isinstance(reply["degraded"], list) and "latencyMs" not in reply, (name, reply)
        if name != "facets":
            assert set(reply["llm"]) >= {"bypassed", "reason"}, (name, reply)


def test_an_extractive_answer_names_its_reason_in_degraded(server: Running) -> None:
    # Given no LLM configured (docs/api.md: "extractive ... the reason is in degraded")
    status, reply = server.request("POST", "/v1/answer", {"question": "Why did the deploy fail?"}, server.auth())
    # Then the answer is extractive and degraded says why
    assert status == 200 and reply["method"] == "extractive", reply
    assert "answer:llm->extractive (no LLM configured)" in reply["degraded"], reply


def test_a_records_source_is_filtered_by_sources_and_sourcetypes_stays_its_alias(server: Running) -> None:
    # Given the samples, whose records carry `source` (github, vercel...) and `sourceType` (push...)
    def ids(filters: dict[str, Any]) -> tuple[int, Any]:
        status, reply = server.request(
            "POST", "/v1/search", {"query": "deployment production", "topK": 50, "filters": filters}, server.auth()
        )
        return status, sorted(r["id"] for r in reply["results"]) if status == 200 else reply

    # When filtered by `sources`, the name of the record's field, Then the same as by its first name
    by_sources, by_first_name = ids({"sources": ["vercel"]}), ids({"sourceTypes": ["vercel"]})
    assert by_sources[0] == 200 and by_sources == by_first_name and by_sources[1], (by_sources, by_first_name)
    assert ids({"not": {"sources": ["vercel"]}}) == ids({"not": {"sourceTypes": ["vercel"]}})
    # And both at once is a 400 naming the second, never one silently winning
    status, reply = ids({"sources": ["vercel"], "sourceTypes": ["github"]})
    assert status == 400 and reply["error"]["details"][0]["field"] == "filters.sourceTypes", reply
    # And facets take either name too
    status, facets = server.request("GET", "/v1/facets?sources=vercel", None, server.auth())
    status_first, first = server.request("GET", "/v1/facets?sourceTypes=vercel", None, server.auth())
    assert (status, facets["total"], facets["facets"]) == (status_first, first["total"], first["facets"]), facets
    status, reply = server.request("GET", "/v1/facets?sources=vercel&sourceTypes=github", None, server.auth())
    assert status == 400 and reply["error"]["details"][0]["field"] == "sourceTypes", reply


def _fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """A GET that does not follow redirects: status, headers and body."""

    class _NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def test_the_console_is_served_without_a_key_under_a_strict_policy(server: Running) -> None:
    # When a browser opens the server's root, Then it is sent to the console; an API client
    # (curl's Accept: */*) still reads the JSON health
    status, headers, _ = _fetch(server.url + "/", {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert (status, headers["Location"]) == (302, "/console")
    assert _fetch(server.url + "/", {"Accept": "*/*"})[0] == 200
    # And the page and its modules come without a key, each with the Content-Security-Policy
    status, headers, page = _fetch(server.url + "/console")
    assert status == 200 and headers["Content-Type"].startswith("text/html") and b'type="module"' in page
    assert "script-src 'self'" in headers["Content-Security-Policy"] and "unsafe-inline" not in str(headers)
    for name, kind in (("console.js", "text/javascript"), ("console.css", "text/css"), ("favicon.svg", "image/svg")):
        status, headers, _ = _fetch(f"{server.url}/console/{name}")
        assert status == 200 and headers["Content-Type"].startswith(kind), name
        assert headers["X-Content-Type-Options"] == "nosniff"
    # And nothing but the shipped files: no other name, no path out of the folder
    for name in ("nothing.js", "..%2F__init__.py", "__init__.py", ".hidden.js"):
        assert _fetch(f"{server.url}/console/{name}")[0] == 404, name


def test_concurrent_requests_of_one_function_never_read_each_others_event(server: Running) -> None:
    # Given one function (search) serving three routes at once on several threads: a page file
    # without a key, facets with a key and a query string, searches with a key and a body
    # (Powertools keeps the current event on a class shared by every resolver of the process)
    from concurrent.futures import ThreadPoolExecutor

    def one(n: int) -> tuple[str, int]:
        kind = ("page", "facets", "search")[n % 3]
        if kind == "page":
            return kind, _fetch(server.url + "/console/console.js")[0]
        if kind == "facets":
            status, body = server.request("GET", "/v1/facets?tiers=A", None, server.auth())
            return kind, status if status != 200 or body["facets"]["tiers"] else -1
        status, body = server.request("POST", "/v1/search", {"query": "deploy", "topK": 3}, server.auth())
        return kind, status

    # When 90 of them run eight at a time, Then every one is answered as if it ran alone
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = Counter(pool.map(one, range(90)))
    assert answers == Counter({("page", 200): 30, ("facets", 200): 30, ("search", 200): 30})


def test_generated_requests_never_get_a_5xx(server: Running) -> None:
    # Given every operation of the generated OpenAPI document
    status, document = server.request("GET", "/openapi.json")
    assert status == 200
    operations = [result.ok() for result in schemathesis.openapi.from_dict(document).get_all_operations()]  # type: ignore[union-attr]
    assert len(operations) == len(ROUTES)
    headers = {"Authorization": f"Bearer {server.key}"}
    statuses: Counter[int] = Counter()
    unsigned: Counter[int] = Counter()  # the webhook receivers: generated bodies carry no signature
    for operation in operations:
        # When schemathesis generates requests for it (valid ones and edge cases) and sends them with a valid key
        @given(case=operation.as_strategy())
        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case: Any) -> None:
            # (schemathesis also generates auth headers from the security schemes; send the real key)
            case.headers = dict(headers)
            response = case.call_and_validate(base_url=server.url, checks=[not_a_server_error])
            (unsigned if "/webhooks/" in case.path else statuses)[response.status_code] += 1

        check()
    # And the generated requests really reached the handlers: successes and validation errors alike
    assert statuses[200] > 0 and statuses[400] > 0 and statuses[401] == 0
    # (a body that is not a JSON object is a 400 before any signature: its route cannot be read)
    assert set(unsigned) <= {400, 401, 413, 415}, unsigned


def _raw(url: str, data: bytes, read_for_s: float = 5.0) -> bytes:
    """Send bytes as they are; everything the server answers until it closes (or time runs out)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=read_for_s) as connection:
        connection.sendall(data)
        received = b""
        deadline = time.monotonic() + read_for_s
        while time.monotonic() < deadline:
            try:
                chunk = connection.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:  # a server may reset after refusing a request it did not read
                break
            if not chunk:
                break
            received += chunk
        return received


def _replies(raw: bytes) -> list[tuple[int, dict[str, Any]]]:
    """(status, JSON body) of every response in a raw byte stream."""
    replies = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = int(
            next(line.split(b":", 1)[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
        )
        replies.append((status, json.loads(rest[:length]) if length else {}))
        raw = rest[length:]
    return replies


def test_a_chunked_body_is_read_as_one_body_never_as_a_second_request(server: Running) -> None:
    body = b'{"query": "deploy", "topK": 1}'
    smuggled = b"GET /v1/observations/note-deploy-env-vars HTTP/1.1\r\nHost: x\r\n\r\n"
    chunked = (
        (
            f"POST /v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.key}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        ).encode()
        + f"{len(body):x}\r\n".encode()
        + body
        + b"\r\n0\r\n\r\n"
    )
    replies = _replies(_raw(server.url, chunked))
    assert [status for status, _ in replies] == [200] and "results" in replies[0][1]
    # Both framings at once is the classic smuggling vector: refused, connection closed, nothing else run
    both = (
        (
            f"POST /v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.key}\r\nContent-Length: 0\r\n"
            f"Transfer-Encoding: chunked\r\n\r\n{len(smuggled):x}\r\n"
        ).encode()
        + smuggled
        + b"\r\n0\r\n\r\n"
    )
    replies = _replies(_raw(server.url, both))
    assert [status for status, _ in replies] == [400] and replies[0][1]["error"]["code"] == "bad_request"


@pytest.mark.parametrize("length", [b"-1", b"abc", b"1, 2"])
def test_a_content_length_that_is_not_a_count_is_refused_with_the_envelope(server: Running, length: bytes) -> None:
    request = b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + b"\r\n\r\n{}"
    replies = _replies(_raw(server.url, request))
    assert [status for status, _ in replies] == [400] and replies[0][1]["error"]["code"] == "bad_request"


def test_head_options_and_oversized_request_parts_answer_the_envelope(server: Running) -> None:
    head = _raw(server.url, b"HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and head.endswith(b"\r\n\r\n")  # headers only, as HEAD requires
    options = _replies(_raw(server.url, b"OPTIONS /v1/search HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
    assert options[0][0] == 405 and options[0][1]["error"]["code"] == "method_not_allowed"
    long_uri = _replies(
        _raw(server.url, b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    )
    assert long_uri[0][0] == 414 and long_uri[0][1]["error"]["code"] == "uri_too_long"
    for request in (
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 70_000 + b"\r\n\r\n",
        b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",  # the request line counts as header bytes
    ):
        too_large = _replies(_raw(server.url, request))
        assert too_large[0][0] == 431 and too_large[0][1]["error"]["code"] == "headers_too_large"


def test_waitress_own_refusals_answer_the_envelope(server: Running) -> None:
    far_beyond = b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Length: 20000000\r\n\r\n"  # refused unread
    body_limit = _replies(_raw(server.url, far_beyond))
    assert body_limit[0][0] == 413 and body_limit[0][1]["error"]["code"] == "payload_too_large"
    chunked_over_limit = (
        b"POST /v1/search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + b"".join(b"10000\r\n" + b"x" * 0x10000 + b"\r\n" for _ in range(17))
        + b"0\r\n\r\n"
    )
    assert _replies(_raw(server.url, chunked_over_limit))[0][0] == 413
    gzip = _replies(_raw(server.url, b"POST /v1/search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"))
    assert gzip[0][0] == 501 and gzip[0][1]["error"]["code"] == "not_implemented"
    garbage = _replies(_raw(server.url, b"\x00\x01 nonsense\r\n\r\n"))
    assert garbage[0][0] == 400 and garbage[0][1]["error"]["code"] == "bad_request"


def test_requests_run_at_once_not_one_after_another(server: Running, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a search that can finish only when a second search and a GET are running with it
    from neural_memory.runtime import get_service

    service = get_service()
    together = threading.Barrier(3, timeout=10)
    original_search, original_get = service.search, service.get

    def search(*args: Any, **kwargs: Any) -> Any:
        together.wait()
        return original_search(*args, **kwargs)

    def get(*args: Any, **kwargs: Any) -> Any:
        together.wait()
        return original_get(*args, **kwargs)

    monkeypatch.setattr(service, "search", search)
    monkeypatch.setattr(service, "get", get)
    statuses: list[int] = []
    calls = [
        lambda: server.request("POST", "/v1/search", {"query": "deploy"}, server.auth()),
        lambda: server.request("POST", "/v1/search", {"query": "billing"}, server.auth()),
        lambda: server.request("GET", "/v1/observations/note-deploy-env-vars", None, server.auth()),
    ]
    threads = [threading.Thread(target=lambda c=c: statuses.append(c()[0])) for c in calls]
    # When the three are sent at once
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    # Then all three complete (run one at a time, the barrier would break: 500s)
    assert sorted(statuses) == [200, 200, 200]


def test_a_stalled_body_is_dropped_after_the_idle_timeout(tmp_path: Path) -> None:
    # Given a server with a 1 s idle timeout
    settings_ = Settings(data_dir=tmp_path)
    keys = SqliteKeyStore(settings_.sqlite_path)
    httpd = LocalApiServer(("127.0.0.1", 0), LocalGateway(keys), settings_.max_body_bytes, True, idle_timeout_s=1.0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        # When a client announces 100 bytes and sends 10, Then the server closes within a few seconds
        began = time.monotonic()
        answer = _raw(httpd.url, b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789", 10)
        assert time.monotonic() - began < 5 and answer == b""
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_serve_answers_with_its_concurrency_and_ctrl_c_saves_the_index(tmp_path: Path, stop: str) -> None:
    # Given the real `neural-memory serve` process with the samples, 3 requests at once; stopped
    # with Ctrl-C in a terminal (SIGINT, as a foreground process gets it) or by `docker stop` or
    # systemd (SIGTERM, which must work even when SIGINT is ignored, as in a background job)
    import os
    import signal
    import subprocess
    import sys

    # How the process starts with SIGINT: Ctrl-C's KeyboardInterrupt, or ignored (whatever pytest's own is)
    on_sigint = "signal.default_int_handler" if stop == "SIGINT" else "signal.SIG_IGN"
    start = f"import runpy, signal; signal.signal(signal.SIGINT, {on_sigint}); "
    start += "runpy.run_module('neural_memory.local.cli', run_name='__main__')"

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-c", start, "serve", "--port", str(port), "--quiet"]
    command += ["--data-dir", str(tmp_path), "--concurrency", "3"]
    env = {**os.environ, "NM_SERVE_CONCURRENCY": "9"}  # the flag wins over the environment
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not (tmp_path / "demo-api-key").exists():
            time.sleep(0.2)
        running = Running(f"http://127.0.0.1:{port}", (tmp_path / "demo-api-key").read_text().strip())
        while time.monotonic() < deadline:
            try:
                status, body = running.request("POST", "/v1/search", {"query": "deploy failed"}, running.auth())
                break
            except OSError:
                time.sleep(0.2)
        # When it has answered a search (building and saving its index), taken a write (the
        # saved index is now behind), and is stopped with Ctrl-C
        assert status == 200 and body["results"]
        snapshot = tmp_path / "neural-memory.mirror.npz"
        built = snapshot.stat().st_mtime_ns
        note = {"id": "n-1", "source": "manual", "observationType": "note", "occurredAt": "2025-12-12T10:00:00Z"}
        note |= {"title": "Ctrl-C", "content": "the index is saved when serve stops"}
        assert running.request("POST", "/v1/observations", {"observations": [note]}, running.auth())[0] == 200
        server.send_signal(getattr(signal, stop))
        try:
            output, _ = server.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            server.send_signal(signal.SIGUSR1)  # its threads' stacks, to say where it hangs
            time.sleep(2)
            server.kill()
            output, _ = server.communicate(timeout=10)
            raise AssertionError(f"serve did not stop within 60 s of {stop}:\n{output[-8000:]}") from None
    finally:
        if server.poll() is None:
            server.kill()
    # Then it said how many requests it runs at once, exited cleanly, and saved its index (0600)
    assert "3 requests at once" in output and server.returncode == 0, output
    assert snapshot.stat().st_mtime_ns > built and snapshot.stat().st_mode & 0o777 == 0o600
