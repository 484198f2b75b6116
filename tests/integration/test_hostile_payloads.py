"""Every normalizer is total: any JSON a signature or the bus delivers either becomes observations or
is refused as that one event with a reason — a 4xx from the webhook receivers, a failed record (not
a failed batch) from the SQS ingest function, a failure line from ``ingest`` — never a 500, a
traceback or a crashed run. Hypothesis mutates the recorded payloads of ``events/eventbridge``
(types and values: huge and non-finite numbers, objects for strings, lists for numbers, missing
keys) and drives each one through all three paths."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neural_memory.auth.factory import build_key_store
from neural_memory.local.ingest.files import load_document
from neural_memory.local.ingest.runner import ingest_loaded
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore

from functions.ingest import app as ingest_app
from tests.helpers.events import NOW, load_event
from tests.helpers.fakes import HashEmbedder

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.local.serving.gateway import LocalLambdaContext

pytestmark = pytest.mark.integration
SECRETS = {"github": "gh-secret", "vercel": "vercel-secret"}
ROUTES = {"github:acme/console": "acme", "vercel:team_3Qp9kZ2mW8xV1nB4": "acme", "neural-memory:acme": "acme"}
EXAMPLES = 2000  # mutated payloads per source (the acceptance)
# (recorded event, the webhook receiver it arrives at, or None: agents reach the bus only)
SOURCES = {
    "github push": ("github_push", "github"),
    "github pull_request": ("github_pull_request", "github"),
    "github issues": ("github_issue_opened", "github"),
    "github issue_comment": ("github_issue_comment", "github"),
    "github release": ("github_release", "github"),
    "vercel": ("vercel_deployment_error", "vercel"),
    "generic": ("note", None),
}
HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=10**40) | st.integers(min_value=-(10**40), max_value=-(2**63)),
    st.sampled_from([1e30, -1e15, float("nan"), float("inf"), float("-inf"), 1e308, -0.0]),
    st.floats(),
    st.text(max_size=40),
    st.sampled_from(["", " ", "0001-01-01T00:00:00Z", "1700000000", "9999-12-31T23:59:59Z", "x" * 600]),
    st.lists(st.integers() | st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers() | st.none(), max_size=3),
)


def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every place of a document that holds a value: keys of objects, items of lists."""
    found: list[tuple[str | int, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, item in items:
        found.append((*prefix, key))
        found.extend(_paths(item, (*prefix, key)))
    return found


def _mutate(document: dict[str, Any], path: tuple[str | int, ...], value: Any, delete: bool) -> dict[str, Any]:
    mutated = copy.deepcopy(document)
    parent: Any = mutated
    for step in path[:-1]:
        parent = parent[step]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return mutated


def _mutations(document: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """The document with one to three of its values replaced by hostile ones, or deleted."""
    one = st.tuples(st.sampled_from(_paths(document)), HOSTILE, st.booleans())

    def apply(changes: list[tuple[tuple[str | int, ...], Any, bool]]) -> dict[str, Any]:
        mutated = document
        for path, value, delete in changes:
            if path in _paths(mutated):  # an earlier change may have removed it
                mutated = _mutate(mutated, path, value, delete)
        return mutated

    return st.lists(one, min_size=1, max_size=3).map(apply)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    config = Settings(
        data_dir=tmp_path,
        ingest_routes=ROUTES,
        github_webhook_secret=SECRETS["github"],
        vercel_webhook_secret=SECRETS["vercel"],
    )
    store = SqliteStore(config.sqlite_path)
    svc = Service(store, HashEmbedder(), config, clock=lambda: NOW)
    set_service(svc)
    yield svc
    set_service(None)
    store.close()


def _deliver(gateway: LocalGateway, receiver: str, detail_type: str, detail: dict[str, Any]) -> int:
    body = json.dumps(detail).encode()
    secret = SECRETS[receiver].encode()
    if receiver == "github":
        headers = {
            "X-GitHub-Event": detail_type,
            "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
            "X-Hub-Signature-256": "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest(),
        }
    else:
        headers = {"x-vercel-signature": hmac.new(secret, body, hashlib.sha1).hexdigest()}
    headers["Content-Type"] = "application/json"
    return gateway.dispatch("POST", f"/v1/webhooks/{receiver}", headers, body).status


@pytest.mark.parametrize("source", list(SOURCES))
def test_no_mutated_payload_reaches_a_500_a_traceback_or_a_failed_batch(
    source: str, service: Service, lambda_context: LocalLambdaContext, capfd: pytest.CaptureFixture[str]
) -> None:
    # Given a recorded event of the source, a routed workspace and the receivers' secrets
    name, receiver = SOURCES[source]
    recorded = load_event(f"eventbridge/{name}")
    gateway = LocalGateway(build_key_store(service.settings))
    seen: dict[str, int] = {"payloads": 0, "stored": 0}
    statuses: set[int] = set()

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(detail=_mutations(recorded["detail"]))
    def deliver(detail: dict[str, Any]) -> None:
        seen["payloads"] += 1
        event = {**recorded, "detail": detail}
        # When it arrives signed at its webhook receiver, Then it is stored or refused: never a 5xx
        if receiver is not None:
            status = _deliver(gateway, receiver, recorded["detail-type"], detail)
            statuses.add(status)
            assert status < 500, (status, detail)
        # When it arrives on the queue with a valid record, Then only its own record can fail
        sqs = {"Records": [_record("poisoned?", event), _record("valid", recorded)]}
        reply = ingest_app.lambda_handler(sqs, lambda_context)
        failed = {item["itemIdentifier"] for item in reply["batchItemFailures"]}
        assert failed <= {"poisoned?"}, reply
        # When it is one document of an `ingest` run, Then it is stored or reported, and the run goes on
        report = ingest_loaded(service, "acme", [load_document(event, "poisoned?"), load_document(recorded, "valid")])
        assert all(failure.origin == "poisoned?" and failure.reason for failure in report.failures), report
        seen["stored"] += failed == set()

    deliver()
    # Then every mutated payload went through all the paths, some of them stored and some refused,
    # and nothing logged a traceback or an unhandled error
    assert seen["payloads"] >= EXAMPLES, seen
    assert 0 < seen["stored"] < seen["payloads"], seen
    logged = capfd.readouterr()
    assert "Traceback" not in logged.out + logged.err
    assert "unhandled error" not in logged.out + logged.err
    assert receiver is None or statuses - {200} and max(statuses) < 500, statuses


def _record(message_id: str, event: dict[str, Any]) -> dict[str, Any]:
    """An SQS record as the recorded batch has them, with this id and event."""
    record: dict[str, Any] = copy.deepcopy(load_event("sqs/ingest_batch")["Records"][0])
    return {**record, "messageId": message_id, "body": json.dumps(event)}
