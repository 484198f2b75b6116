"""Issue 56: secrets in the fields redaction used to skip, and in what the server logs.

One data folder under a running ``serve`` (the model on) written three ways: a note over HTTP with
a secret in its ``id``, ``actorName``, ``sessionId``, a branch name and a file path; a signed
GitHub push whose branch, file path, author and ``X-GitHub-Delivery`` header hold one; and
``import git`` of a clone whose branch, file path and author hold one. Then GETs whose query
strings and path hold a secret. No reply, no byte of the data folder and no line the server logged
holds any of them; the derived id comes back, and ``GET``/``DELETE`` of the original id reach it."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
from neural_memory.redaction.identifiers import stored_id

from tests.helpers.events import load_event
from tests.helpers.processes import call, cli
from tests.helpers.serve import serve

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.integration

WEBHOOK_SECRET = "gh-webhook-secret-for-identity-tests"
WORKSPACE = "demo"


def _ant(tail: str) -> str:
    return "sk-ant-api03-" + ("Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0Xc2Vb4Nm6Qw8Er0Ty2Ui4Op6As8Df0Gh2Jk4Lz6Xc8" + tail) + "AA"


SECRETS = {
    "id": "ghp_" + "Zq7Rk2Lm9Xc4Vb1Nn8Aa3Ss6Dd0Ff5Gg2Hh7",
    "actor": "AKIAQ3RT7WZX7K2M4PL5",
    "session": "xoxb-123456789012-1234567890123-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7",
    "branch": _ant("Branch1"),
    "path": "sk-proj-" + "Zx9Cv8Bn7Mq6Wr5Et4Yu3Io2Pa1Sd0Fg9Hj8Kl7Zx6Cv5Bn4Mq3Wr2Et1Yu0Io" + "Pa9Sd8Fg7",
    "deleted": "ghp_" + "Yw8Sl3Kn0Vd5Cb2Mm9Zz4Tt7Ee1Gg6Hh3Jj8",
    "query": "AKIAZX7QW3ER5TY9UI2P",
    "facets": "AKIAMN4BV7CX1ZA9SD3F",
    "hook_branch": _ant("Branch2"),
    "hook_path": _ant("PathX23"),
    "hook_author": "AKIAPL9OK8IJ7UH6YG5T",
    "delivery": "ghp_" + "Dl4Vr8Yx2Qw6Ez0Tk3Bn7Mc1Pa5Sf9Gh2Jk4",
    "event": "ghp_" + "Ev5Nt7Hd9Rx1Qa3Zs5Xd7Cf9Vg1Bh3Nj5Mk7",
    "git_branch": _ant("Branch3"),
    "git_path": _ant("PathY45"),
    "git_author": "AKIARF5TG6YH7UJ8IK9Q",
}


def _git(repo: Path, *args: str) -> None:
    author = f"Ann {SECRETS['git_author']}"
    env = {**os.environ, "GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": "ann@example.com"}
    env |= {"GIT_COMMITTER_NAME": author, "GIT_COMMITTER_EMAIL": "ann@example.com"}
    env |= {"GIT_AUTHOR_DATE": "2026-01-10T10:00:00+00:00", "GIT_COMMITTER_DATE": "2026-01-10T10:00:00+00:00"}
    subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True)


def _clone(root: Path) -> Path:
    """A history on a branch whose name holds a secret, touching a file whose path holds one."""
    repo = root / "console"
    (repo / "deploy").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", f"tmp_{SECRETS['git_branch']}")
    (repo / "deploy" / f"OPENAI_key_is_{SECRETS['git_path']}.txt").write_text("moved to the vault\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "Move the deploy key out of the tree")
    return repo


def _signed_push() -> tuple[bytes, dict[str, str]]:
    detail = load_event("eventbridge/github_push")["detail"]
    detail["ref"] = f"refs/heads/leak_{SECRETS['hook_branch']}"
    for commit in detail["commits"]:
        commit["modified"] = [f"deploy/OPENAI_key_is_{SECRETS['hook_path']}.txt"]
        commit["author"]["name"] = f"bot{SECRETS['hook_author']}x"
    detail["head_commit"] = detail["commits"][-1]
    body = json.dumps(detail).encode()
    signature = "sha256=" + hmac.new(WEBHOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-GitHub-Event": "push", "X-Hub-Signature-256": signature}
    headers["X-GitHub-Delivery"] = SECRETS["delivery"]
    return body, headers


def _post_raw(url: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url + path, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:  # loopback only
            return int(reply.status), reply.read().decode()
    except urllib.error.HTTPError as error:
        return int(error.code), error.read().decode()


def _note(id_: str, **fields: Any) -> dict[str, Any]:
    note = {"id": id_, "source": "manual", "observationType": "note", "occurredAt": "2026-01-15T09:00:00Z",
            "title": "Deploy notes", "content": "Rotated the deploy credentials after the incident."}  # fmt: skip
    return note | fields


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("identities")
    data = root / "data"
    saved = dict(os.environ)
    os.environ["NM_INGEST_ROUTES"] = json.dumps({"github:acme/console": WORKSPACE})
    os.environ["NM_GITHUB_WEBHOOK_SECRET"] = WEBHOOK_SECRET
    world: dict[str, Any] = {"data": data, "replies": []}
    try:
        with serve(data, samples=False, quiet=False) as served:
            url, key = served.url, served.key
            note = _note(
                f"deploy-{SECRETS['id']}",
                actorName=f"ci {SECRETS['actor']}",
                sessionId=f"sess_{SECRETS['session']}",
                metadata={"branch": f"fix/tmp_{SECRETS['branch']}"},
                codeRefs=[{"repository": "acme/console", "paths": [f"deploy/OPENAI_key_is_{SECRETS['path']}.txt"]}],
            )
            doomed = _note(f"doomed-{SECRETS['deleted']}")
            world["post"] = call(url, key, "POST", "/v1/observations", {"observations": [note, doomed]})
            world["get"] = call(url, key, "GET", f"/v1/observations/{note['id']}")
            world["delete"] = call(url, key, "DELETE", f"/v1/observations/{doomed['id']}")
            world["get_deleted"] = call(url, key, "GET", f"/v1/observations/{stored_id(doomed['id'])}")
            world["webhook"] = _post_raw(url, "/v1/webhooks/github", *_signed_push())
            body, headers = _signed_push()
            world["odd_event"] = _post_raw(
                url, "/v1/webhooks/github", body, headers | {"X-GitHub-Event": SECRETS["event"]}
            )
            done = cli("import", "git", str(_clone(root)), "--repo", "acme/console", "--workspace", WORKSPACE,
                       "--data-dir", str(data))  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            world["replies"].append(done.stdout + done.stderr)
            for path in (
                f"/v1/experts?q={quote('deploy creds: ' + SECRETS['query'])}",
                f"/v1/facets?q={quote(SECRETS['facets'])}",
                f"/v1/observations/{SECRETS['query']}",
            ):
                world["replies"].append(json.dumps(call(url, key, "GET", path)))
            world["search"] = call(url, key, "POST", "/v1/search", {"query": "deploy key vault", "topK": 20})
        world["server_log"] = served.stop()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    yield world


def test_an_id_holding_a_secret_is_replaced_by_its_derived_id_which_get_and_delete_of_the_original_reach(
    world: dict[str, Any],
) -> None:
    status, reply = world["post"]
    assert status == 200, reply
    derived = stored_id(f"deploy-{SECRETS['id']}")
    assert reply["ids"] == [derived, stored_id(f"doomed-{SECRETS['deleted']}")]
    assert derived.startswith("deploy-redacted-github-token-")
    status, got = world["get"]
    assert (status, got["id"]) == (200, derived), got
    assert got["actorName"].startswith("ci redacted-aws-access-key-id-")
    assert {r["field"] for r in got["redactions"]} >= {"id", "actorName", "sessionId", "metadata.branch", "codeRefs"}
    assert world["delete"][0] == 200, world["delete"]
    assert world["get_deleted"][0] == 404


def test_no_reply_no_byte_of_the_data_folder_and_no_server_log_line_holds_a_secret(world: dict[str, Any]) -> None:
    assert world["webhook"][0] == 200, world["webhook"]
    assert world["odd_event"][0] == 200, world["odd_event"]  # signed, of an event not observed: skipped
    texts = {"odd event's reply": world["odd_event"][1]}
    texts["server log"] = world["server_log"]
    texts["replies"] = "\n".join([*world["replies"], json.dumps(world["post"]), json.dumps(world["get"]),
                                  json.dumps(world["search"]), world["webhook"][1]])  # fmt: skip
    for path in sorted(world["data"].rglob("*")):
        texts[f"the name {path}"] = str(path)
        if path.is_file():
            texts[str(path)] = path.read_bytes().decode("latin-1")
    leaks = [(name, secret) for name, text in texts.items() for secret in SECRETS.values() if secret in text]
    assert leaks == []
    assert "GET /v1/experts 200" in world["server_log"]
    assert "/v1/observations/{id}" in world["server_log"]


def test_the_webhook_and_import_git_keep_the_branch_path_and_author_redacted(world: dict[str, Any]) -> None:
    status, found = world["search"]
    assert status == 200, found
    shown = json.dumps(found)
    assert "[redacted:anthropic-key]" in shown or "redacted-anthropic-key-" in shown
    assert not any(secret in shown for secret in SECRETS.values())
