"""Secrets never become memories, whichever way they come in: a note over HTTP, a signed GitHub
webhook, an SQS batch to the ingest function, an ``ingest`` file, ``import git``, ``import github``
(a pull request's body), ``import vercel`` (a deployment's commit message) and an agent's MCP
``remember``, all into one data folder under a running ``serve`` (the model on, as users run it).

Each path carries its own AWS key pair, GitHub token, database password, JWT and PEM block. Then:
search (keyword for the key id itself, and by meaning), GET, the answer and the MCP tools return
the placeholders; no byte of the data folder (SQLite files, WAL, embedding cache, the saved
in-memory index) and no line the server or the MCP server logged holds any secret."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import random
import string
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore

from functions.ingest import app as ingest_app
from tests.helpers.events import load_event
from tests.helpers.mcp_sessions import text_of
from tests.helpers.processes import call, cli, mcp_agent
from tests.helpers.rest_stand_in import GitHubData, VercelData, github_stand_in, serving, vercel_stand_in
from tests.helpers.serve import serve

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration

WEBHOOK_SECRET = "gh-webhook-secret-for-tests"
PATHS = ("http", "webhook", "sqs", "file", "git", "github", "vercel", "mcp")
WORKSPACE = "demo"
SUBJECT_KINDS = ("aws-access-key-id", "github-token", "url-password")  # in every path's first line


def _random(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def secrets_of(path: str) -> dict[str, str]:
    """The secrets one path carries, different for every path."""
    rng = random.Random(path)
    upper = string.ascii_uppercase + string.digits
    pem_body = "\n".join(_random(rng, string.ascii_letters + string.digits + "+/", 64) for _ in range(3))
    return {
        "aws-access-key-id": "AKIA" + _random(rng, upper, 16),
        "aws-secret-access-key": _random(rng, string.ascii_letters + string.digits + "/+", 39) + "Q",
        "github-token": "ghp_" + _random(rng, string.ascii_letters + string.digits, 35) + "7",
        "url-password": "Pw" + _random(rng, string.ascii_letters + string.digits, 12) + "!9",
        "jwt": "eyJhbGciOiJIUzI1NiJ9."
        + base64.urlsafe_b64encode(json.dumps({"sub": _random(rng, string.digits, 12)}).encode()).decode().rstrip("=")
        + "." + _random(rng, string.ascii_letters + string.digits + "_-", 43),
        "private-key": f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----",
    }  # fmt: skip


def leak_text(path: str) -> str:
    """A message pasting every secret of ``path``, with a word to find it by."""
    s = secrets_of(path)
    return (  # a push keeps commit subjects only: the first line holds three
        f"Rotate canary{path} key {s['aws-access-key-id']}, token {s['github-token']} and "
        f"postgres://app:{s['url-password']}@db.internal:5432/app\n\n"
        f"aws_secret_access_key={s['aws-secret-access-key']}\n"
        f"curl -H 'Authorization: Bearer {s['jwt']}' https://api.example.com\n\n{s['private-key']}\n"
    )


def pieces(secret: str) -> list[str]:
    """What must not survive of a secret: the whole, and (a PEM block) each of its body lines."""
    return [secret] + [line for line in secret.splitlines() if len(line) > 20 and "-----" not in line]


def every_secret() -> list[str]:
    return [piece for path in PATHS for secret in secrets_of(path).values() for piece in pieces(secret)]


def _git(repo: Path, *args: str, at: str = "2026-01-10T10:00:00+00:00") -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Ann Lee", "GIT_AUTHOR_EMAIL": "ann@example.com"}
    env |= {"GIT_COMMITTER_NAME": "Ann Lee", "GIT_COMMITTER_EMAIL": "ann@example.com"}
    env |= {"GIT_AUTHOR_DATE": at, "GIT_COMMITTER_DATE": at}
    subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True)


def _repository(root: Path) -> Path:
    """A history whose commit message and merged pull request (its merge commit's body) paste secrets."""
    repo = root / "console"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("print('hi')\n")
    _git(repo, "add", "app.py")
    _git(repo, "commit", "-q", "-m", leak_text("git"))
    _git(repo, "checkout", "-q", "-b", "fix")
    (repo / "app.py").write_text("print('hello')\n")
    _git(repo, "commit", "-qam", "Say hello", at="2026-01-11T10:00:00+00:00")
    _git(repo, "checkout", "-q", "main")
    merge = "Merge pull request #7 from ann/fix\n\n" + leak_text("git").replace("canarygit", "canarygitpr")
    _git(repo, "merge", "-q", "--no-ff", "fix", "-m", merge, at="2026-01-12T10:00:00+00:00")
    return repo


def _signed_push() -> tuple[bytes, dict[str, str]]:
    detail = load_event("eventbridge/github_push")["detail"]
    detail["commits"][0]["message"] = leak_text("webhook")
    detail["head_commit"] = detail["commits"][0]
    body = json.dumps(detail).encode()
    signature = "sha256=" + hmac.new(WEBHOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-GitHub-Event": "push", "X-Hub-Signature-256": signature}
    headers["X-GitHub-Delivery"] = "5f0c2a4e-0000-4000-8000-00000000cafe"
    return body, headers


def _post_raw(url: str, path: str, body: bytes, headers: dict[str, str]) -> int:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url + path, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:  # loopback only
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def _sqs_batch(data_dir: Path, embedder: OnnxLocalEmbedder, context: LocalLambdaContext) -> None:
    """An agent's note put on the bus, as the ingest function receives it from SQS."""
    event = {
        "version": "0", "id": "8d1f0c2e-0000-4000-8000-000000000044", "detail-type": "note",
        "source": f"neural-memory.{WORKSPACE}", "account": "123456789012", "time": "2026-01-15T10:00:00Z",
        "region": "us-east-1", "resources": [],
        "detail": {"id": "note-sqs-leak", "title": "Bus note canarysqs", "content": leak_text("sqs")},
    }  # fmt: skip
    batch = {"Records": [{"messageId": "m-1", "receiptHandle": "r-1", "body": json.dumps(event), "attributes": {}}]}
    settings = Settings(data_dir=data_dir, ingest_routes={f"neural-memory:{WORKSPACE}": WORKSPACE})
    service = Service(SqliteStore(settings.sqlite_path), embedder, settings)
    set_service(service)
    try:
        reply = ingest_app.lambda_handler(batch, context)
    finally:
        set_service(None)
        service.close()
    assert reply == {"batchItemFailures": []}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxLocalEmbedder) -> Iterator[dict[str, Any]]:
    """One data folder written through every path; what the server and the MCP server logged."""
    from neural_memory.local.serving.gateway import LocalLambdaContext

    root = tmp_path_factory.mktemp("redaction")
    data = root / "data"
    saved = dict(os.environ)
    os.environ["NM_INGEST_ROUTES"] = json.dumps({"github:acme/console": WORKSPACE})
    os.environ["NM_GITHUB_WEBHOOK_SECRET"] = WEBHOOK_SECRET
    os.environ["GITHUB_TOKEN"] = "ghp_standin"
    os.environ["VERCEL_TOKEN"] = "vercel_standin"
    world: dict[str, Any] = {"data": data, "replies": {}}
    try:
        with serve(data, samples=False) as served:
            world["url"], world["key"] = served.url, served.key
            note = {"id": "note-http-leak", "source": "manual", "observationType": "note",
                    "title": "Incident canaryhttp", "occurredAt": "2026-01-15T09:00:00Z",
                    "content": leak_text("http")}  # fmt: skip
            status, reply = call(served.url, served.key, "POST", "/v1/observations", {"observations": [note]})
            assert (status, reply["redacted"]) == (200, 1), reply
            assert _post_raw(served.url, "/v1/webhooks/github", *_signed_push()) == 200
            _sqs_batch(data, embedder, LocalLambdaContext(function_name="ingest", aws_request_id="req-sqs"))
            events = root / "notes.jsonl"
            events.write_text(json.dumps({**note, "id": "note-file-leak", "title": "File canaryfile",
                                          "content": leak_text("file")}) + "\n")  # fmt: skip
            for args in (
                ["ingest", str(events)],
                ["import", "git", str(_repository(root)), "--repo", "acme/console"],
            ):
                done = cli(*args, "--workspace", WORKSPACE, "--data-dir", str(data))
                assert done.returncode == 0, done.stdout + done.stderr
                world["replies"][args[0] + args[1]] = done.stdout + done.stderr
            github = GitHubData()
            github.pulls[0]["body"] = leak_text("github")
            vercel = VercelData()
            vercel.deployments[-1]["meta"]["githubCommitMessage"] = leak_text("vercel")
            with serving(github_stand_in(github)) as gh, serving(vercel_stand_in(vercel)) as vc:
                for args in (
                    ["import", "github", "acme/console", "--api-base", gh.url],
                    ["import", "vercel", "console", "--team", "team_3Qp9kZ2mW8xV1nB4", "--api-base", vc.url],
                ):
                    done = cli(*args, "--workspace", WORKSPACE, "--data-dir", str(data))
                    assert done.returncode == 0, done.stdout + done.stderr
                    world["replies"][args[1]] = done.stdout + done.stderr
            errlog = root / "mcp.log"
            with mcp_agent(data, WORKSPACE, errlog) as agent:
                remembered = agent.call(
                    "remember", {"observations": [{"content": leak_text("mcp"), "title": "Agent canarymcp"}]}
                )
                assert not remembered.is_error, text_of(remembered)
                world["mcp"] = {
                    path: [
                        text_of(agent.call("search_memory", {"query": f"canary{path}", "mode": "keyword"})),
                        text_of(agent.call("answer_question", {"question": f"What about canary{path}?"})),
                    ]
                    for path in PATHS
                }
                world["mcp_remember"] = text_of(remembered)
            world["mcp_log"] = errlog.read_text()
            world["search"] = {
                path: call(served.url, served.key, "POST", "/v1/search",
                           {"query": f"canary{path} key token", "topK": 10, "expand": "observation"})[1]
                for path in PATHS
            }  # fmt: skip
            world["by_key_id"] = {
                path: call(served.url, served.key, "POST", "/v1/search",
                           {"query": secrets_of(path)["aws-access-key-id"], "mode": "keyword"})[1]
                for path in PATHS
            }  # fmt: skip
            world["answers"] = {
                path: call(served.url, served.key, "POST", "/v1/answer", {"question": f"What about canary{path}?"})[1]
                for path in PATHS
            }
            world["gets"] = {
                result["id"]: call(served.url, served.key, "GET", f"/v1/observations/{result['id']}")[1]
                for path in PATHS
                for result in world["search"][path]["results"]
            }
        world["server_log"] = served.stop()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    yield world


@pytest.mark.parametrize("path", PATHS)
def test_every_path_stores_the_placeholders_and_search_finds_them(world: dict[str, Any], path: str) -> None:
    results = world["search"][path]["results"]
    texts = [r["text"] for r in results if f"canary{path}" in r["text"]]
    assert texts, (path, [r["title"] for r in results])
    for text in texts:
        for kind in SUBJECT_KINDS:
            assert f"[redacted:{kind}]" in text, (path, text)
    assert not world["by_key_id"][path]["results"], world["by_key_id"][path]


@pytest.mark.parametrize("path", PATHS)
def test_get_says_what_was_redacted_by_kind_and_field(world: dict[str, Any], path: str) -> None:
    found = [r for r in world["search"][path]["results"] if f"canary{path}" in r["text"]]
    out = world["gets"][found[0]["id"]]
    kinds = {item["kind"] for item in out["redactions"]}
    assert set(SUBJECT_KINDS) <= kinds, out
    assert {item["field"] for item in out["redactions"]} <= {"title", "content", "url", "codeRefs"} | {
        f"metadata.{k}" for k in out["metadata"]
    }


def test_no_reply_of_any_path_holds_a_secret(world: dict[str, Any]) -> None:
    replies = json.dumps(
        [world[k] for k in ("search", "by_key_id", "answers", "gets", "mcp", "mcp_remember", "replies")]
    )
    leaked = [secret for secret in every_secret() if secret in replies]
    assert leaked == []
    assert any("[redacted:" in text for texts in world["mcp"].values() for text in texts)


def test_no_byte_of_the_data_folder_and_no_log_line_holds_a_secret(world: dict[str, Any]) -> None:
    files = [f for f in world["data"].rglob("*") if f.is_file()]
    assert any(f.name.endswith("-wal") or f.suffix == ".npz" for f in files), files  # the WAL and the saved index
    leaks = {
        str(f.relative_to(world["data"])): [s[:12] for s in every_secret() if s.encode() in f.read_bytes()]
        for f in files
    }
    assert {f: found for f, found in leaks.items() if found} == {}
    for log in (world["server_log"], world["mcp_log"]):
        assert [s[:12] for s in every_secret() if s in log] == []


def test_import_summaries_count_what_was_redacted(world: dict[str, Any]) -> None:
    assert "redacted" in world["replies"]["importgit"], world["replies"]["importgit"]
