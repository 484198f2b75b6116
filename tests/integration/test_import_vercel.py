"""``neural-memory import vercel``: the real command, in process, against a real HTTP server on
loopback that speaks Vercel's ``/v6/deployments`` (``tests/helpers/rest_stand_in.py``: pages by
``until``/``pagination.next``, a rate limit, a 502, a page of the wrong shape), into a data
folder's embedded store. A deployment's observation is named by the deployment and its state, as
the webhook's now is, so a webhook after the import updates it."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import TYPE_CHECKING

import pytest
from neural_memory.auth.factory import build_key_store
from neural_memory.local.cli import main
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.providers import embeddings
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.base import read_one
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.events import NOW, load_event
from tests.helpers.fakes import HashEmbedder
from tests.helpers.rest_stand_in import TEAM, Reply, StandIn, bad_gateway, serving, unauthorized, vercel_stand_in

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.integration

DEPLOYMENTS = "/v6/deployments"
EXPECTED = {
    "vercel-dpl_Q7wE5rT3yU1iO9pA7sD5-created",  # still building
    "vercel-dpl_3Fq5Rt7Yu9Io1Pa3Sd5Fg7Hj-succeeded",  # the sample webhook's deployment
    "vercel-dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx-error",
    "vercel-dpl_Z1xC3vB5nM7aS9dF1gH3-canceled",
    "vercel-dpl_L1kJ2hG3fD4sA5qW6eR7-succeeded",
}  # dpl_P0oI9uY8tR7eW6qA5sD4 is DELETED: no webhook reports that
VERCEL_SECRET = "vercel-webhook-secret"


@pytest.fixture
def vercel() -> Iterator[StandIn]:
    with serving(vercel_stand_in()) as stand_in:
        yield stand_in


@pytest.fixture(autouse=True)
def _hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "build_embedder", lambda settings: HashEmbedder())
    monkeypatch.setenv("VERCEL_TOKEN", "vercel_standin")


def _import(stand_in: StandIn, data: Path, *extra: str) -> int:
    args = ["import", "vercel", "console", "--team", TEAM, "--api-base", stand_in.url, "--data-dir", str(data)]
    return main([*args, "--workspace", "acme", "--failures", str(data / "failures.jsonl"), *extra])


def _stored(data: Path) -> tuple[int, set[str]]:
    store = SqliteStore(Settings(data_dir=data).sqlite_path)
    try:
        return store.count("acme"), set(store.read("acme", sorted(EXPECTED)))
    finally:
        store.close()


def test_deployments_are_imported_with_their_state_and_commit(
    vercel: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # When a project's deployments are imported
    assert _import(vercel, tmp_path) == 0
    out = capsys.readouterr().out
    # Then each is stored as the webhook of its state, under the id that webhook makes
    assert "5 created, 0 updated, 0 skipped, 0 failed" in out and "passed over 1 deployment(s)" in out
    assert _stored(tmp_path) == (len(EXPECTED), EXPECTED)
    store = SqliteStore(Settings(data_dir=tmp_path).sqlite_path)
    failed = read_one(store, "acme", "vercel-dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx-error")
    store.close()
    assert failed is not None and failed.title == "Deployment failed: console (production)"
    assert failed.metadata["commitSha"] == "7f3a9b2c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f70"
    assert failed.metadata["repo"] == "acme/console" and failed.actor_name == "octocat"
    assert "Commit 7f3a9b2 on main: Fix auth redirect loop after session refresh" in failed.content
    # And the list was read page by page (until = the previous page's pagination.next), for the team
    asked = vercel.asked(DEPLOYMENTS)
    assert [("until" in r.query, r.query["teamId"], r.query["projectId"]) for r in asked] == [
        (False, TEAM, "console"),
        (True, TEAM, "console"),
    ]
    assert {r.authorization for r in asked} == {"Bearer vercel_standin"}


def test_importing_twice_or_a_webhook_after_the_import_creates_nothing_new(
    vercel: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given imported deployments, imported again from scratch and from the cursor
    assert _import(vercel, tmp_path) == 0
    assert _import(vercel, tmp_path, "--restart") == 0
    assert _import(vercel, tmp_path) == 0
    outs = capsys.readouterr().out
    assert "0 created, 5 updated" in outs and "0 created, 1 updated" in outs  # the cursor's newest, again
    assert _stored(tmp_path)[0] == len(EXPECTED)
    # When Vercel delivers the succeeded deployment's webhook afterwards
    routes = {f"vercel:{TEAM}": "acme"}
    settings = Settings(data_dir=tmp_path, ingest_routes=routes, vercel_webhook_secret=VERCEL_SECRET)
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, HashEmbedder(), settings, clock=lambda: NOW)
    set_service(service)
    try:
        body = json.dumps(load_event("eventbridge/vercel_deployment_succeeded")["detail"]).encode()
        signature = hmac.new(VERCEL_SECRET.encode(), body, hashlib.sha1).hexdigest()
        headers = {"Content-Type": "application/json", "x-vercel-signature": signature}
        reply = LocalGateway(build_key_store(settings)).dispatch("POST", "/v1/webhooks/vercel", headers, body)
        # Then it updates the imported deployment: the workspace holds no more than before
        assert reply.status == 200, reply.body
        assert service.store.count("acme") == len(EXPECTED)
        stored = read_one(service.store, "acme", "vercel-dpl_3Fq5Rt7Yu9Io1Pa3Sd5Fg7Hj-succeeded")
        assert stored is not None and stored.occurred_at.isoformat() == "2025-12-12T11:00:00+00:00"
    finally:
        set_service(None)
        store.close()


def test_an_interrupted_import_continues_and_waits_and_retries_on_the_way(
    vercel: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an API rate limited (429, Retry-After), then failing once (502), then serving the first
    # page, then refusing the token (a hard failure)
    vercel.fail(DEPLOYMENTS, _vercel_rate_limited, bad_gateway, lambda: _first_page(vercel), unauthorized)
    # When imported, Then it waited and retried, wrote the first page, and stopped with the reason
    assert _import(vercel, tmp_path) == 1
    captured = capsys.readouterr()
    assert "Vercel rate limit reached: waiting until" in captured.err and "502: retrying in" in captured.err
    assert "401" in captured.err and "a re-run continues from" in captured.err
    first_count, _ = _stored(tmp_path)
    assert first_count == 3  # the first page: building, the sample's succeeded, the error
    cursor = json.loads((tmp_path / "import-cursors" / f"vercel-{TEAM}.console.json").read_text())
    assert set(cursor["state"]["walk"]) == {"until", "top"}
    # When run again, Then it continues where the walk stopped, then walks down from the newest
    asked = len(vercel.requests)
    assert _import(vercel, tmp_path) == 0
    assert "2 created" in capsys.readouterr().out
    again = vercel.requests[asked:]
    assert again[0].query["until"] == str(cursor["state"]["walk"]["until"]) and "until" not in again[1].query
    assert _stored(tmp_path) == (len(EXPECTED), EXPECTED)


def _vercel_rate_limited() -> Reply:
    return Reply(429, b'{"error": {"code": "rate_limited", "message": "Too many requests"}}', {"Retry-After": "1"})


def _first_page(vercel: StandIn) -> Reply:
    return vercel.route(DEPLOYMENTS, {"projectId": "console", "limit": "100"})


def test_a_page_of_the_wrong_shape_or_no_token_is_a_clear_error(
    vercel: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a page that is a list where Vercel sends an object
    vercel.fail(DEPLOYMENTS, lambda: Reply(200, b"[]"))
    # When imported, Then the error names the page
    assert _import(vercel, tmp_path) == 1
    err = capsys.readouterr().err
    assert f"error: {vercel.url}/v6/deployments?" in err and "expected an object with deployments, got list" in err
    # Given a deployment without its id, Then that is named too
    vercel.fail(DEPLOYMENTS, lambda: Reply(200, b'{"deployments": [{"created": 1}], "pagination": {}}'))
    assert _import(vercel, tmp_path) == 1
    assert "not a page of deployments: deployments.0.uid: Field required" in capsys.readouterr().err
    # And without a token nothing is asked
    monkeypatch.delenv("VERCEL_TOKEN")
    asked = len(vercel.requests)
    assert _import(vercel, tmp_path) == 2
    assert "VERCEL_TOKEN" in capsys.readouterr().err and len(vercel.requests) == asked
