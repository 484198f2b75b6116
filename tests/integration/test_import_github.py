"""``neural-memory import github``: the real command, in process, against a real HTTP server on
loopback that speaks GitHub's REST API (``tests/helpers/rest_stand_in.py``: paged lists with
``Link``, rate limits, a 502, a page that is not JSON), into a data folder's embedded store, or
into a running local API. The observations are the webhooks' (same ids), so importing twice or a
webhook after an import creates nothing new."""

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
from tests.helpers.local_api import running_local_api
from tests.helpers.rest_stand_in import (
    REPO,
    Reply,
    StandIn,
    bad_gateway,
    github_stand_in,
    not_json,
    rate_limited,
    retry_after,
    serving,
    unauthorized,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration

SLUG = REPO.replace("/", ".")
PULLS = {
    f"github-pr-{SLUG}-470-pull_request_merged",
    f"github-pr-{SLUG}-471-pull_request_closed",
    f"github-pr-{SLUG}-475-pull_request_merged",
    f"github-pr-{SLUG}-482-pull_request_merged",
    f"github-pr-{SLUG}-490-pull_request_merged",
}
ISSUES = {f"github-issue-{SLUG}-{n}-opened" for n in (12, 13, 14)} | {
    f"github-issue-{SLUG}-{n}-closed" for n in (12, 14)
}
COMMENTS = {f"github-comment-{SLUG}-9001", f"github-comment-{SLUG}-9002"}  # 9003 is a bot's: skipped
RELEASES = {f"github-release-{SLUG}-1", f"github-release-{SLUG}-2"}  # 3 is a draft
EXPECTED = PULLS | ISSUES | COMMENTS | RELEASES
GITHUB_SECRET = "gh-webhook-secret"


@pytest.fixture
def github() -> Iterator[StandIn]:
    with serving(github_stand_in()) as stand_in:
        yield stand_in


@pytest.fixture(autouse=True)
def _hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's store embeds with the hashing test embedder (fast; the model is not what is tested)."""
    monkeypatch.setattr(embeddings, "build_embedder", lambda settings: HashEmbedder())
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_standin")
    monkeypatch.delenv("GH_TOKEN", raising=False)


def _import(stand_in: StandIn, data: Path, *extra: str) -> int:
    args = ["import", "github", REPO, "--api-base", stand_in.url, "--data-dir", str(data)]
    return main([*args, "--failures", str(data / "failures.jsonl"), *extra])


def _stored(data: Path, ids: set[str]) -> tuple[int, set[str]]:
    """How many observations the acme workspace holds, and which of ``ids``."""
    store = SqliteStore(Settings(data_dir=data).sqlite_path)
    try:
        return store.count("acme"), set(store.read("acme", sorted(ids)))
    finally:
        store.close()


def test_a_repository_is_imported_as_its_webhooks_would_have_delivered_it(
    github: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # When a repository's history is imported from the API
    assert _import(github, tmp_path, "--workspace", "acme") == 0
    out = capsys.readouterr().out
    # Then every closed pull request, issue event, human comment and published release is stored
    # under the id its webhook makes, and the bot's comment is skipped with the reason
    assert "14 created, 0 updated, 1 skipped, 0 failed" in out and "skipped 1: comment" in out
    assert _stored(tmp_path, EXPECTED) == (len(EXPECTED), EXPECTED)
    # And a merged pull request carries what only the API knows: files, reviewers, merger, commits
    store = SqliteStore(Settings(data_dir=tmp_path).sqlite_path)
    pr = read_one(store, "acme", f"github-pr-{SLUG}-482-pull_request_merged")
    assert pr is not None and pr.metadata["mergedBy"] == "octocat" and pr.metadata["reviewers"] == ["mona"]
    assert pr.metadata["commits"] == 3 and pr.metadata["commitSha"] == "7f3a9b2c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f70"
    assert sorted(pr.code_refs or []) == [
        f"{REPO}:src/auth/refresh.ts",
        f"{REPO}:src/hooks/useSession.ts",
        f"{REPO}:src/hooks/useSessionRefresh.ts",
        f"{REPO}:src/middleware.ts",
    ]
    comment = read_one(store, "acme", f"github-comment-{SLUG}-9002")
    assert comment is not None and comment.title == "Comment on #482: Move session refresh into edge middleware"
    assert comment.metadata["pull_request"] is True
    closed = read_one(store, "acme", f"github-pr-{SLUG}-471-pull_request_closed")
    assert closed is not None and "mergedBy" not in closed.metadata
    store.close()
    # And the list was read page by page, following Link, with the token
    pages = [r.query.get("page", "1") for r in github.asked(f"/repos/{REPO}/pulls")]
    assert pages == ["1", "2", "3"]
    assert {r.authorization for r in github.requests} == {"Bearer ghp_standin"}


def test_importing_twice_or_a_webhook_after_the_import_creates_nothing_new(
    github: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an imported repository
    assert _import(github, tmp_path, "--workspace", "acme") == 0
    capsys.readouterr()
    # When it is imported again, reading everything (--restart), Then everything is updated
    assert _import(github, tmp_path, "--workspace", "acme", "--restart") == 0
    assert "0 created, 14 updated, 1 skipped" in capsys.readouterr().out
    # When it is imported again from its cursor, Then only what is at the cursor's edge is read again
    asked = len(github.requests)
    assert _import(github, tmp_path, "--workspace", "acme") == 0
    assert "0 created, 2 updated" in capsys.readouterr().out
    details = [r.path for r in github.requests[asked:] if r.path.startswith(f"/repos/{REPO}/pulls/")]
    assert details == [f"/repos/{REPO}/pulls/490", f"/repos/{REPO}/pulls/490/reviews", f"/repos/{REPO}/pulls/490/files"]
    # When GitHub delivers the merged pull request's webhook afterwards
    routes = {f"github:{REPO}": "acme"}
    settings = Settings(data_dir=tmp_path, ingest_routes=routes, github_webhook_secret=GITHUB_SECRET)
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, HashEmbedder(), settings, clock=lambda: NOW)
    set_service(service)
    try:
        body = json.dumps(load_event("eventbridge/github_pull_request")["detail"]).encode()
        headers = {
            "Content-Type": "application/json",
            "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
            "X-Hub-Signature-256": "sha256=" + hmac.new(GITHUB_SECRET.encode(), body, hashlib.sha256).hexdigest(),
        }
        imported = read_one(service.store, "acme", f"github-pr-{SLUG}-482-pull_request_merged")
        assert imported is not None and "importedText" in imported.metadata
        reply = LocalGateway(build_key_store(settings)).dispatch("POST", "/v1/webhooks/github", headers, body)
        # Then it updates the imported pull request: the workspace holds no more than before
        assert reply.status == 200, reply.body
        assert service.store.count("acme") == len(EXPECTED)
        pr = read_one(service.store, "acme", f"github-pr-{SLUG}-482-pull_request_merged")
        assert pr is not None and pr.title == "PR #482 merged: Move session refresh into edge middleware"
        # And what only the import knew (reviewers, merger, changed files) is kept, and still searched
        for key in ("reviewers", "mergedBy", "commits", "importedText"):
            assert pr.metadata[key] == imported.metadata[key], key
        assert pr.code_refs == imported.code_refs and pr.content.endswith(str(imported.metadata["importedText"]))
    finally:
        set_service(None)
        store.close()


def test_rate_limits_are_waited_out_and_a_502_is_retried(
    github: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an API that is out of requests until a second from now, then asks for a second's
    # pause, and whose releases fail once with a 502
    github.fail(f"/repos/{REPO}/issues", rate_limited)
    github.fail(f"/repos/{REPO}/issues/comments", retry_after)
    github.fail(f"/repos/{REPO}/releases", bad_gateway)
    # When imported
    assert _import(github, tmp_path, "--workspace", "acme") == 0
    captured = capsys.readouterr()
    # Then it waited until the reset (shown on standard error) before asking again, and finished
    assert "14 created, 0 updated, 1 skipped, 0 failed" in captured.out
    assert "GitHub rate limit reached: waiting until " in captured.err and " UTC (" in captured.err
    limited, after = github.asked(f"/repos/{REPO}/issues")[:2]
    assert after.at >= int(limited.at) + 1  # the reset the 403 named
    waited, again = github.asked(f"/repos/{REPO}/issues/comments")[:2]
    assert again.at - waited.at >= 1  # Retry-After: 1
    assert "releases?per_page=100: 502: retrying in" in captured.err
    assert len(github.asked(f"/repos/{REPO}/releases")) == 3  # the 502, then both pages
    assert _stored(tmp_path, EXPECTED)[1] == EXPECTED


def test_an_interrupted_import_continues_from_its_cursor(
    github: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an import whose token is revoked half-way through the issues (a hard failure)
    github.fail(f"/repos/{REPO}/issues", lambda: github.route(f"/repos/{REPO}/issues", {"per_page": "100"}))
    github.fail(f"/repos/{REPO}/issues", unauthorized)
    # When imported, Then it stops, says why and where a re-run continues, and keeps what was written
    assert _import(github, tmp_path, "--workspace", "acme") == 1
    captured = capsys.readouterr()
    assert "401 Bad credentials" in captured.err and "a re-run continues from" in captured.err
    assert "github-acme.console.json" in captured.err
    count, stored = _stored(tmp_path, EXPECTED)
    assert stored >= PULLS and not COMMENTS & stored and count == len(stored)
    cursor = json.loads((tmp_path / "import-cursors" / "github-acme.console.json").read_text())
    assert cursor["target"] == "workspace acme" and cursor["state"]["issues"]["since"]
    # When run again, Then it continues: the pull requests are not read again, the rest is imported
    asked = len(github.requests)
    assert _import(github, tmp_path, "--workspace", "acme") == 0
    out = capsys.readouterr().out
    again = github.requests[asked:]
    assert [r.path for r in again if r.path.startswith(f"/repos/{REPO}/pulls/")] == [
        f"/repos/{REPO}/pulls/490",
        f"/repos/{REPO}/pulls/490/reviews",
        f"/repos/{REPO}/pulls/490/files",
    ]  # fmt: skip  (only the one at the cursor's edge)
    assert [r.query.get("page") for r in again if r.path == f"/repos/{REPO}/pulls"] == ["3"]
    assert next(r for r in again if r.path == f"/repos/{REPO}/issues").query["since"] == "2025-11-21T10:00:00Z"
    assert f"{len(EXPECTED) - count} created" in out
    assert _stored(tmp_path, EXPECTED) == (len(EXPECTED), EXPECTED)
    # And a cursor is the target's: another workspace reads everything
    assert _import(github, tmp_path, "--workspace", "other") == 0
    assert "14 created" in capsys.readouterr().out


def test_a_malformed_page_is_reported_with_its_address(
    github: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an API whose second page of pull requests is an HTML error page served as 200
    github.fail(f"/repos/{REPO}/pulls", lambda: github.route(f"/repos/{REPO}/pulls", _LIST), not_json)
    # When imported, Then it stops with the page's address and no traceback
    assert _import(github, tmp_path, "--workspace", "acme") == 1
    err = capsys.readouterr().err
    assert f"error: GET {github.url}/repos/{REPO}/pulls?" in err and "page=2" in err and "not JSON (text/html)" in err
    assert "Traceback" not in err
    # Given a page of the wrong shape (an object where a list belongs), Then it is named too
    github.fail(f"/repos/{REPO}/pulls", _wrong_shape)
    assert _import(github, tmp_path, "--workspace", "acme", "--restart") == 1
    assert "expected a list of pull requests, got dict" in capsys.readouterr().err


_LIST = {"state": "closed", "sort": "updated", "direction": "asc", "per_page": "100", "page": "1"}


def _wrong_shape() -> Reply:
    return Reply(200, b'{"message": "Moved Permanently"}')


def test_a_repository_that_does_not_exist_is_a_clear_error(
    github: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["import", "github", "acme/nope", "--api-base", github.url, "--workspace", "acme"]
    assert main([*args, "--data-dir", str(tmp_path)]) == 2
    assert f"error: GET {github.url}/repos/acme/nope: 404 Not Found" in capsys.readouterr().err


def test_into_a_running_api_with_its_key(
    github: StandIn, tmp_path: Path, embedder: OnnxLocalEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a running API (as a deployed stack is, for an AWS user) and its key
    with running_local_api(tmp_path / "server", embedder, None) as api:
        # When the history is imported into it
        code = _import(github, tmp_path / "client", "--api-url", api.url, "--key", api.key)
        # Then the API holds every observation, in the key's workspace
        assert code == 0, capsys.readouterr().err
        assert "14 created, 0 updated, 1 skipped, 0 failed" in capsys.readouterr().out
        assert set(api.service.store.read("demo", sorted(EXPECTED))) == EXPECTED
        # And again, from scratch: all updated
        assert _import(github, tmp_path / "client", "--api-url", api.url, "--key", api.key, "--restart") == 0
        assert "0 created, 14 updated" in capsys.readouterr().out
