"""``scrub``: secrets out of what was stored before redaction, on both stores. The stores are
written here directly (``prepare`` then ``Store.write``: the path before redaction existed), then
scrubbed: nothing the store keeps holds a secret, the chat turns quoting a scrubbed turn are cut
again, a stopped scrub resumes from its cursor, a second run changes nothing, and the command on a
data folder leaves ``check`` clean and no secret in any file."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.ingest.prepare import prepare
from neural_memory.ingest.turn_context import add_turn_context
from neural_memory.models import ObservationIn
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.sqlite.files import release
from neural_memory.stores.sqlite.store import SqliteStore
from neural_memory.use_cases import scrubbing as scrub_module
from opensearchpy import OpenSearch

from tests.helpers.pipeline import NOW
from tests.helpers.processes import cli

if TYPE_CHECKING:
    from pathlib import Path

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration

GHP = "ghp_" + "Mn4Bv7Cx1Za9Sd3Fg6Hj2Kl5Qw8Er0Ty4Ui7P"
AWS_ID = "AKIAZX7QW3ER5TY9UI2O"
PASSWORD = "Qw9!zXr4mT7v"
SECRETS = (GHP, AWS_ID, PASSWORD)


def _observations() -> list[ObservationIn]:
    """A note, an E push and a chat session whose first turn pastes a token, as agents wrote them."""
    notes: list[dict[str, Any]] = [
        {"id": "note-old", "source": "manual", "observationType": "decision", "occurredAt": NOW - timedelta(days=40),
         "title": f"Deploy key {AWS_ID}", "content": f"Use postgres://app:{PASSWORD}@db:5432/app with {GHP}",
         "metadata": {"password": PASSWORD}},
        {"id": "push-old", "source": "github", "observationType": "push", "occurredAt": NOW - timedelta(days=3),
         "title": "1 commit(s) pushed", "content": f"- Set GITHUB_TOKEN={GHP} in CI (abc1234)"},
    ]  # fmt: skip
    for n, text in enumerate([f"here is my token {GHP}", "thanks, which repo?", "the console one", "done"]):
        notes.append({
            "id": f"turn-{n}", "source": "agent", "observationType": "conversation_turn", "sessionId": "s-1",
            "actorName": "ann" if n % 2 == 0 else "bot", "occurredAt": NOW - timedelta(hours=5, minutes=-n),
            "content": text, "tier": "A",
        })  # fmt: skip
    return [ObservationIn.model_validate(n) for n in notes]


def _write_unredacted(service: Service, workspace: str = "acme") -> None:
    """What a version before redaction stored: prepared, chat turns in context, embedded, written."""
    config = service.settings
    items = [
        prepare(o, now=NOW, policy=config.tiers_of(workspace), ttl_days=config.collaborative_ttl_days,
                chunking=service.chunking)
        for o in _observations()
    ]  # fmt: skip
    add_turn_context(items, service.earlier_turn(workspace), config.turn_context)
    service.embed_chunks(workspace, items)
    assert not service.store.write(workspace, items).failed


def _kept(service: Service, osmem_url: str | None) -> str:
    """Everything the store holds: every OpenSearch document, or every row of the SQLite tables."""
    if isinstance(service.store, OpenSearchStore):
        client = OpenSearch(hosts=[osmem_url])
        return json.dumps(client.search(index="nm-test-ws-*", body={"query": {"match_all": {}}, "size": 1000}))
    assert isinstance(service.store, SqliteStore)
    conn = service.store._reader().conn
    tables = ("observations", "chunks", "chunks_fts", "metadata_terms")
    return json.dumps([list(map(str, row)) for table in tables for row in conn.execute(f"SELECT * FROM {table}")])


def test_a_scrub_redacts_what_was_stored_recuts_quoting_turns_resumes_and_is_idempotent(
    svc: Service, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    osmem = request.getfixturevalue("osmem_url") if isinstance(svc.store, OpenSearchStore) else None
    _write_unredacted(svc)
    assert GHP in _kept(svc, osmem)  # stored verbatim, as before redaction
    monkeypatch.setattr(scrub_module, "PAGE", 2)  # several pages, one ending inside an instant
    # A run stopped after its first page…
    first = svc.scrub(deadline=0.0)
    assert not first.finished and first.scanned >= 2
    # …resumes from its cursor and finishes
    rest = svc.scrub(first.cursor)
    assert rest.finished
    assert first.scanned + rest.scanned == 6
    assert first.redacted + rest.redacted == 3  # the note, the push, the first turn
    kept = _kept(svc, osmem)
    assert [s for s in SECRETS if s in kept] == []
    note = svc.get("acme", "note-old", "r")
    assert note.title == "Deploy key [redacted:aws-access-key-id]"
    assert note.metadata == {"password": "[redacted:credential]"}
    assert {(r.field, r.kind) for r in note.redactions or []} >= {
        ("title", "aws-access-key-id"),
        ("content", "github-token"),
    }
    # The turns after the first: their context chunk quoted it; cut again, they quote the placeholder
    assert "[redacted:github-token]" in kept
    # A second run finds nothing more
    again = svc.scrub()
    assert (again.finished, again.redacted, again.scanned) == (True, 0, 6)


def test_the_command_leaves_check_clean_and_no_secret_in_any_file(tmp_path: Path, embedder: OnnxLocalEmbedder) -> None:
    settings = Settings(data_dir=tmp_path)
    service = Service(SqliteStore(settings.sqlite_path), embedder, settings, clock=lambda: NOW)
    _write_unredacted(service, "demo")
    service.close()
    release(settings.sqlite_path)  # this process is done with the folder: scrub needs it alone
    files = b"".join(f.read_bytes() for f in tmp_path.rglob("*") if f.is_file())
    assert GHP.encode() in files
    done = cli("scrub", "--data-dir", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "scanned 6 observations; 3 had a secret redacted" in done.stdout, done.stdout
    checked = cli("check", "--data-dir", str(tmp_path))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    leaks = {f.name: [s for s in SECRETS if s.encode() in f.read_bytes()] for f in tmp_path.rglob("*") if f.is_file()}
    assert {name: found for name, found in leaks.items() if found} == {}
    found = cli("search", "deploy key", "--workspace", "demo", "--mode", "keyword", "--data-dir", str(tmp_path))
    assert "Deploy key [redacted:aws-access-key-id]" in found.stdout and AWS_ID not in found.stdout, found.stdout
    # Run again: nothing more to redact
    again = cli("scrub", "--data-dir", str(tmp_path))
    assert "scanned 6 observations; 0 had a secret redacted" in again.stdout, again.stdout + again.stderr


def test_the_maintenance_function_scrubs_until_its_deadline_and_answers_with_its_cursor(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.runtime import set_service

    from functions.maintenance import app as maintenance_app
    from tests.helpers.fakes import HashEmbedder

    class FifteenMinutes(LocalLambdaContext):
        def __init__(self) -> None:
            super().__init__(function_name="maintenance", aws_request_id="r2")

        def get_remaining_time_in_millis(self) -> int:
            return 900_000

    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    _write_unredacted(service)
    set_service(service)
    monkeypatch.setattr(scrub_module, "PAGE", 2)
    try:
        # A function with under a minute left stops after a page, with the cursor to go on from
        context = LocalLambdaContext(function_name="maintenance", aws_request_id="r1")
        first = maintenance_app.lambda_handler({"action": "scrub"}, context)
        assert first["finished"] is False and first["cursor"]["workspace"] == "acme"
        rest = maintenance_app.lambda_handler({"action": "scrub", "cursor": first["cursor"]}, FifteenMinutes())
        assert rest["finished"] is True and first["redacted"] + rest["redacted"] == 3
    finally:
        set_service(None)
        service.close()
    assert [s for s in SECRETS if s in _kept(service, None)] == []
