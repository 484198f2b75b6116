"""Webhook receivers on the local path (``make serve``'s gateway, the webhooks function's own
handler): a delivery signed as GitHub or Vercel sign theirs lands as an observation in the routed
workspace; a wrong, missing or replayed signature, or an unrouted repository, stores nothing."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import logging
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.auth.factory import build_key_store
from neural_memory.auth.keys import issue_key
from neural_memory.clock import utcnow
from neural_memory.local.serving.gateway import LocalGateway, LocalLambdaContext
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.base import read_one
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.events import NOW, load_event
from tests.helpers.fakes import HashEmbedder

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.local.serving.gateway import ProxyResponse

pytestmark = pytest.mark.integration
GITHUB_SECRET = "gh-webhook-secret"
VERCEL_SECRET = "vercel-webhook-secret"
ROUTES = {"github:acme/console": "acme", "vercel:team_3Qp9kZ2mW8xV1nB4": "acme"}
PUSH_ID = "github-push-acme.console-7f3a9b2c1d0e"


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[Service]:
    settings = Settings(
        data_dir=tmp_path,
        ingest_routes=ROUTES,
        github_webhook_secret=GITHUB_SECRET,
        vercel_webhook_secret=VERCEL_SECRET,
    )
    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    set_service(service)
    yield service
    set_service(None)


@pytest.fixture
def gateway(svc: Service) -> LocalGateway:
    return LocalGateway(build_key_store(svc.settings))


def _github(payload: dict[str, Any], event: str = "push", secret: str = GITHUB_SECRET) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
        "X-Hub-Signature-256": signature,
    }
    return body, headers


def _push() -> dict[str, Any]:
    return copy.deepcopy(load_event("eventbridge/github_push")["detail"])


def _post(gateway: LocalGateway, source: str, body: bytes, headers: dict[str, str]) -> tuple[ProxyResponse, Any]:
    reply = gateway.dispatch("POST", f"/v1/webhooks/{source}", headers, body)
    return reply, json.loads(reply.body)


def test_a_signed_github_push_lands_in_the_routed_workspace(gateway: LocalGateway, svc: Service) -> None:
    # Given a push delivery signed with the webhook's secret, as GitHub signs it
    body, headers = _github(_push())
    # When it reaches the local server's webhook route (no API key)
    reply, receipt = _post(gateway, "github", body, headers)
    # Then it was verified, routed to acme and ingested at once
    assert reply.status == 200, receipt
    assert receipt == {
        "deliveryId": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
        "event": "push",
        "routedTo": "acme",
        "sentTo": "local",
        "skipped": None,
    }
    stored = read_one(svc.store, "acme", PUSH_ID)
    assert stored is not None and (stored.source, stored.source_type) == ("github", "push")
    # And a redelivery of the same push updates the same observation
    assert _post(gateway, "github", body, headers)[0].status == 200
    assert svc.store.count("acme") == 1


@pytest.mark.parametrize(
    "tamper",
    ["wrong secret", "no signature", "modified body", "sha1 instead of sha256"],
)
def test_a_bad_signature_is_401_and_stores_nothing(gateway: LocalGateway, svc: Service, tamper: str) -> None:
    body, headers = _github(_push(), secret="not-the-secret" if tamper == "wrong secret" else GITHUB_SECRET)
    if tamper == "no signature":
        del headers["X-Hub-Signature-256"]
    if tamper == "modified body":  # a captured delivery replayed with another payload
        payload = _push()
        payload["head_commit"]["message"] = "rm -rf everything"
        body = json.dumps(payload).encode()
    if tamper == "sha1 instead of sha256":
        headers["X-Hub-Signature-256"] = "sha1=" + hmac.new(GITHUB_SECRET.encode(), body, hashlib.sha1).hexdigest()
    reply, answer = _post(gateway, "github", body, headers)
    assert reply.status == 401 and answer["error"]["code"] == "unauthorized", answer
    assert "X-Hub-Signature-256" in answer["error"]["message"]
    assert svc.store.count("acme") == 0


def test_an_unrouted_repository_is_reported_and_not_stored(gateway: LocalGateway, svc: Service) -> None:
    payload = _push()
    payload["repository"]["full_name"] = "acme/secret-project"
    reply, answer = _post(gateway, "github", *_github(payload))
    assert reply.status == 422 and answer["error"]["code"] == "unrouted", answer
    assert "github:acme/secret-project" in answer["error"]["message"]
    assert svc.store.count("acme") == 0


def test_a_signed_vercel_deployment_error_lands_and_a_github_ping_is_answered(
    gateway: LocalGateway, svc: Service
) -> None:
    payload = load_event("eventbridge/vercel_deployment_error")["detail"]
    body = json.dumps(payload).encode()
    signature = hmac.new(VERCEL_SECRET.encode(), body, hashlib.sha1).hexdigest()
    reply, receipt = _post(
        gateway, "vercel", body, {"Content-Type": "application/json", "x-vercel-signature": signature}
    )
    assert reply.status == 200 and receipt["routedTo"] == "acme" and receipt["event"] == "deployment.error", receipt
    assert svc.store.count("acme") == 1
    # A ping (sent when the hook is created) is verified and answered, never ingested
    ping = {"zen": "Design for failure.", "hook_id": 1, "repository": _push()["repository"]}
    reply, receipt = _post(gateway, "github", *_github(ping, event="ping"))
    assert reply.status == 200 and receipt["sentTo"] is None and receipt["routedTo"] == "acme", receipt
    assert svc.store.count("acme") == 1


def test_without_a_secret_the_receiver_refuses_and_names_the_setting_in_its_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(data_dir=tmp_path, ingest_routes=ROUTES)
    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    set_service(service)
    try:
        gateway = LocalGateway(build_key_store(settings))
        with caplog.at_level(logging.WARNING):
            reply, answer = _post(gateway, "github", *_github(_push()))
    finally:
        set_service(None)
    assert reply.status == 401 and answer["error"]["message"] == "missing or invalid X-Hub-Signature-256 signature"
    assert "NM_GITHUB_WEBHOOK_SECRET" in caplog.text and "NM_GITHUB" not in reply.body
    assert service.store.count("acme") == 0


@pytest.mark.parametrize("secrets", ["per route", "none"])
def test_an_unverified_delivery_gets_one_reply_whether_its_repository_is_routed_or_not(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, secrets: str
) -> None:
    # Given routed repositories each with its own secret (or no secret configured at all)
    routes = {"github:acme/console": "acme", "github:rival/app": "rival"}
    secret = json.dumps({"github:acme/console": "s-acme", "github:rival/app": "s-rival"}) if secrets != "none" else None
    settings = Settings(data_dir=tmp_path, ingest_routes=routes, github_webhook_secret=secret)
    set_service(Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW))
    replies: dict[str, tuple[int, str, str]] = {}
    try:
        gateway = LocalGateway(build_key_store(settings))
        for repository in ("acme/console", "someone/unrouted"):
            payload = _push()
            payload["repository"]["full_name"] = repository
            for signing in ("unsigned", "wrongly signed"):
                body, headers = _github(payload, secret="guessed")
                if signing == "unsigned":
                    del headers["X-Hub-Signature-256"]
                # When an attacker posts it
                with caplog.at_level(logging.WARNING):
                    reply, answer = _post(gateway, "github", body, headers)
                replies[f"{repository} {signing}"] = (reply.status, answer["error"]["code"], answer["error"]["message"])
    finally:
        set_service(None)
    # Then every reply is the same 401, word for word: nothing tells which repositories are routed
    assert set(replies.values()) == {(401, "unauthorized", "missing or invalid X-Hub-Signature-256 signature")}, replies
    # And the server's log has the detail: which route, and whether a secret was there to check against
    assert "github:someone/unrouted" in caplog.text and "github:acme/console" in caplog.text


def test_the_body_limit_holds_before_the_signature_is_checked(gateway: LocalGateway, svc: Service) -> None:
    payload = _push()
    payload["padding"] = "x" * svc.settings.max_body_bytes
    reply, answer = _post(gateway, "github", *_github(payload))
    assert reply.status == 413 and answer["error"]["code"] == "payload_too_large", answer
    assert svc.store.count("acme") == 0


def test_webhook_routes_need_no_api_key_but_the_others_still_do(gateway: LocalGateway, svc: Service) -> None:
    key = issue_key(build_key_store(svc.settings), "acme", utcnow())
    assert gateway.dispatch("POST", "/v1/search", {}, b'{"query": "x"}').status == 401
    assert gateway.dispatch("POST", "/v1/search", {"Authorization": f"Bearer {key}"}, b'{"query": "x"}').status == 200
    # A valid API key does not stand in for a signature
    body, headers = _github(_push())
    del headers["X-Hub-Signature-256"]
    headers["Authorization"] = f"Bearer {key}"
    assert _post(gateway, "github", body, headers)[0].status == 401


def test_with_a_secret_per_route_one_tenant_cannot_sign_for_another(tmp_path: Path) -> None:
    # Given two tenants' repositories, each with its own webhook secret (a JSON secret)
    routes = {"github:acme/console": "acme", "github:rival/app": "rival"}
    secrets = json.dumps({"github:acme/console": "s-acme", "github:rival/app": "s-rival"})
    settings = Settings(data_dir=tmp_path, ingest_routes=routes, github_webhook_secret=secrets)
    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    set_service(service)
    try:
        gateway = LocalGateway(build_key_store(settings))
        # When rival signs a push that names acme's repository, Then it is refused, nothing stored
        reply, answer = _post(gateway, "github", *_github(_push(), secret="s-rival"))
        assert reply.status == 401 and service.store.count("acme") == 0, answer
        # And acme's own secret is accepted for acme's repository
        reply, answer = _post(gateway, "github", *_github(_push(), secret="s-acme"))
        assert reply.status == 200 and answer["routedTo"] == "acme" and service.store.count("acme") == 1
    finally:
        set_service(None)


def test_an_event_the_ingestion_does_not_read_is_answered_not_queued(gateway: LocalGateway, svc: Service) -> None:
    # Given a routed repository's star event (hooks often subscribe to everything)
    payload = load_event("eventbridge/github_star_unsupported")["detail"]
    reply, receipt = _post(gateway, "github", *_github(payload, event="star"))
    # Then it is verified and answered with the reason, never sent on (where it would be retried
    # and dead-lettered, and fire the DLQ alarm)
    assert reply.status == 200 and receipt["sentTo"] is None and receipt["skipped"], receipt
    assert svc.store.count("acme") == 0


def test_one_plain_secret_for_several_workspaces_is_refused_at_start_saying_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from neural_memory.local.cli import main
    from neural_memory.settings import get_settings
    from pydantic import ValidationError

    from functions.webhooks import app as webhooks_app
    from tests.helpers.events import api_event

    # Given two tenants' repositories routed to their workspaces, and one plain GitHub secret (with
    # it, rival could sign a push naming acme's repository, and it landed in acme)
    routes = {"github:acme/console": "acme", "github:rival/app": "rival", "vercel:team_1": "acme"}
    # When the settings are read, Then they are refused, naming the variable and the JSON to set
    with pytest.raises(ValidationError, match=r"NM_GITHUB_WEBHOOK_SECRET is one secret .* 2 workspaces"):
        Settings(data_dir=tmp_path, ingest_routes=routes, github_webhook_secret="shared")
    # And `serve` refuses to start (exit 2, before binding), saying what to set
    (tmp_path / "routes.json").write_text(json.dumps(routes))
    monkeypatch.setenv("NM_GITHUB_WEBHOOK_SECRET", "shared")
    args = ["serve", "--data-dir", str(tmp_path / "data"), "--routes", str(tmp_path / "routes.json"), "--port", "1"]
    assert main(args) == 2
    err = capfd.readouterr().err
    assert "NM_GITHUB_WEBHOOK_SECRET" in err and '"github:acme/console": "<secret>"' in err, err
    # And the AWS webhook function answers its first request 503 with the same message, storing nothing
    monkeypatch.setenv("NM_INGEST_ROUTES", json.dumps(routes))
    get_settings.cache_clear()
    set_service(None)
    try:
        body, headers = _github(_push(), secret="shared")
        event = api_event("api/search_post", body.decode(), workspace=None, path="/v1/webhooks/github")
        event.update(resource="/v1/webhooks/github", headers=headers)
        reply = webhooks_app.lambda_handler(event, LocalLambdaContext(function_name="webhooks", aws_request_id="r"))
    finally:
        get_settings.cache_clear()
    answer = json.loads(reply["body"])
    assert reply["statusCode"] == 503 and answer["error"]["code"] == "configuration_error", answer
    assert "to a JSON object of route -> secret" in answer["error"]["message"]
    # While one secret per route, or one plain secret for routes of one workspace, is accepted
    monkeypatch.delenv("NM_GITHUB_WEBHOOK_SECRET")
    monkeypatch.delenv("NM_INGEST_ROUTES")
    per_route = json.dumps({"github:acme/console": "s-acme", "github:rival/app": "s-rival"})
    assert Settings(data_dir=tmp_path, ingest_routes=routes, github_webhook_secret=per_route)
    assert Settings(data_dir=tmp_path, ingest_routes=routes, vercel_webhook_secret="one")
    assert Settings(data_dir=tmp_path, ingest_routes=ROUTES, github_webhook_secret="one")


def test_a_shared_secret_read_from_secrets_manager_is_refused_at_the_first_delivery(tmp_path: Path) -> None:
    # Given settings whose github secret is one for two workspaces' routes (as a secret an ARN names
    # is read only when a delivery arrives, the same rule is applied to what was read)
    routes = {"github:acme/console": "acme", "github:rival/app": "rival"}
    settings = Settings(data_dir=tmp_path, ingest_routes=routes)
    # Then the problem names the variable and the JSON to set; a per-route JSON covering one of
    # the workspaces leaves the shared one for a single workspace, which is fine
    problem = settings.shared_secret_problem("github", {"*": "shared"})
    assert problem is not None and "NM_GITHUB_WEBHOOK_SECRET_ARN" in problem and "rival" in problem
    assert settings.shared_secret_problem("github", {"*": "shared", "github:rival/app": "s"}) is None
    assert settings.shared_secret_problem("vercel", {"*": "shared"}) is None
