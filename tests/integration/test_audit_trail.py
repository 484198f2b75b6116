"""Who wrote it and what was done, on both stores (SQLite; OpenSearch on osmem-server): the server's
``createdBy`` on every stored observation and its filter, the ownership rule, and the audit trail
kept beside the observations (the embedded file's table; an index beside each workspace's),
filtered and paged the same on each."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from neural_memory.auth.roles import Caller
from neural_memory.clock import utcnow
from neural_memory.errors import Forbidden
from neural_memory.models import SearchRequest
from neural_memory.models.audit import AuditQuery
from neural_memory.service import Service
from neural_memory.stores.base import read_one

from tests.helpers.pipeline import NOW, note
from tests.helpers.two_stores import svc

if TYPE_CHECKING:
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration
__all__ = ["svc"]

ALICE, BOB, OPS = Caller("alice", "write"), Caller("bob", "write"), Caller("ops", "admin")


def _search(svc: Service, workspace: str, created_by: list[str] | None) -> list[tuple[str, str | None]]:
    body: dict[str, object] = {"query": "retry budget", "mode": "keyword"}
    if created_by is not None:
        body["filters"] = {"createdBy": created_by}
    reply = svc.search(workspace, SearchRequest.model_validate(body), "r")
    return [(r.id, r.created_by) for r in reply.results]


def test_created_by_is_the_writer_s_and_filters_the_search_on_each_store(svc: Service) -> None:
    # Given alice and bob each writing, and a body claiming bob for alice's
    svc.ingest("acme", [note("a", "retry budget three", "The retry budget is three.", createdBy="bob")], "r", ALICE)
    svc.ingest("acme", [note("b", "retry budget five", "The retry budget of jobs is five.")], "r", BOB)
    # When it is read and searched, with and without the filter
    stored = read_one(svc.store, "acme", "a")
    # Then each carries its writer's name; the filter keeps one writer's (in groups too)
    assert stored is not None and stored.created_by == "alice"
    assert sorted(_search(svc, "acme", None)) == [("a", "alice"), ("b", "bob")]
    assert _search(svc, "acme", ["alice"]) == [("a", "alice")]
    assert _search(svc, "acme", ["carol"]) == []
    either = {"query": "retry budget", "mode": "keyword", "filters": {"anyOf": [{"createdBy": ["bob"]}]}}
    assert [r.id for r in svc.search("acme", SearchRequest.model_validate(either), "r").results] == ["b"]


def test_a_writer_changes_and_deletes_only_its_own_and_an_admin_any(svc: Service) -> None:
    svc.ingest("acme", [note("a", "retry budget", "Three.")], "r", ALICE)
    # When bob changes or deletes alice's, Then Forbidden naming the admin role, and nothing changed
    for attempt in (
        lambda: svc.ingest("acme", [note("a", "retry budget", "Nine.")], "r", BOB),
        lambda: svc.delete("acme", "a", "r", BOB),
        lambda: svc.ingest("acme", [note("a", "retry budget", "Nine.")], "r", Caller("rita", "read")),
    ):
        with pytest.raises(Forbidden):
            attempt()
    kept = read_one(svc.store, "acme", "a")
    assert kept is not None and kept.content == "Three."
    # And the admin changes it (alice still wrote it) and deletes it
    svc.ingest("acme", [note("a", "retry budget", "Four.")], "r", OPS)
    changed = read_one(svc.store, "acme", "a")
    assert changed is not None and (changed.content, changed.created_by) == ("Four.", "alice")
    assert svc.delete("acme", "a", "r", OPS).deleted


def test_the_audit_trail_is_kept_beside_the_observations_filtered_and_paged(svc: Service) -> None:
    # Given writes, a change and a delete in acme, and a write in another workspace
    began = utcnow() - timedelta(seconds=1)
    svc.ingest("acme", [note("a", "retry budget", "Secret words."), note("b", "other", "More words.")], "w1", ALICE)
    svc.ingest("acme", [note("a", "retry budget", "Changed words.")], "w2", ALICE)
    svc.delete("acme", "b", "d1", OPS)
    svc.ingest("rival", [note("z", "rival", "Theirs.")], "w3", BOB)
    assert svc.audit is not None
    # When the trail is read whole, by key, by action, by time, and a page at a time
    whole = svc.audit.read("acme", AuditQuery(limit=50))
    by_alice = svc.audit.read("acme", AuditQuery(key="alice"))
    deletes = svc.audit.read("acme", AuditQuery(action="delete"))
    later = svc.audit.read("acme", AuditQuery(start=utcnow() + timedelta(minutes=1)))
    since = svc.audit.read("acme", AuditQuery(start=began, end=utcnow() + timedelta(seconds=1)))
    page = svc.audit_trail("acme", AuditQuery(limit=2), "r", OPS)
    rest = svc.audit_trail("acme", AuditQuery(limit=2, cursor=page.next_cursor), "r", OPS)
    # Then acme's entries, newest first, with who, what and which ids; never another workspace's
    assert [(e.key, e.action, e.ids, e.count, e.request_id) for e in whole] == [
        ("ops", "delete", ["b"], 1, "d1"),
        ("alice", "change", ["a"], 1, "w2"),
        ("alice", "write", ["a", "b"], 2, "w1"),
    ]
    assert [e.action for e in by_alice] == ["change", "write"]
    assert [e.key for e in deletes] == ["ops"]
    assert later == [] and len(since) == 3
    assert [e.action for e in page.entries] == ["delete", "change"] and page.next_cursor is not None
    assert [e.action for e in rest.entries] == ["write"] and rest.next_cursor is None
    assert [e.key for e in svc.audit.read("rival", AuditQuery())] == ["bob"]
    # And no content anywhere in it; only an admin reads it
    assert "words" not in str([e.model_dump() for e in whole]).lower()
    with pytest.raises(Forbidden):
        svc.audit_trail("acme", AuditQuery(), "r", ALICE)


def test_a_purge_counts_what_it_deleted_in_each_workspace_s_trail(svc: Service) -> None:
    # Given a chat turn in acme (C tier: it expires 7 days after it occurred) and a note in rival
    turn = note("t", "a turn", observation_type="conversation_turn", occurred_at=NOW - timedelta(days=1))
    svc.ingest("acme", [turn], "w", ALICE)
    svc.ingest("rival", [note("n", "a note")], "w", BOB)
    # When the maintenance purges after it expired
    assert svc.purge_expired(NOW + timedelta(days=10), Caller("system:maintenance", "admin")) == 1
    # Then acme's trail says who purged how many; rival's has no purge
    purges = svc.audit.read("acme", AuditQuery(action="purge")) if svc.audit else []
    assert [(e.key, e.count, e.ids) for e in purges] == [("system:maintenance", 1, [])]
    assert svc.audit is not None and svc.audit.read("rival", AuditQuery(action="purge")) == []


def test_a_scrub_by_the_command_and_by_the_maintenance_function_is_in_the_trail(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.runtime import set_service
    from neural_memory.stores.sqlite.files import release
    from neural_memory.stores.sqlite.store import SqliteStore
    from neural_memory.use_cases import scrubbing as scrub_module

    from functions.maintenance import app as maintenance_app
    from tests.helpers.fakes import HashEmbedder
    from tests.helpers.processes import cli
    from tests.integration.test_scrub import _write_unredacted

    # Given what a version before redaction stored in acme (three records hold a secret)
    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    _write_unredacted(service)
    set_service(service)
    monkeypatch.setattr(scrub_module, "PAGE", 2)
    # When the maintenance function scrubs it over two invocations
    try:
        context = LocalLambdaContext(function_name="maintenance", aws_request_id="r1")
        first = maintenance_app.lambda_handler({"action": "scrub"}, context)
        context.get_remaining_time_in_millis = lambda: 900_000  # type: ignore[method-assign]
        maintenance_app.lambda_handler({"action": "scrub", "cursor": first["cursor"]}, context)
    finally:
        set_service(None)
        service.close()
    release(settings.sqlite_path)
    # And the operator scrubs again with the command, which finds nothing left
    done = cli("scrub", "--data-dir", str(settings.data_dir))
    assert done.returncode == 0, done.stdout + done.stderr
    listed = cli("audit", "--workspace", "acme", "--action", "scrub", "--json", "--data-dir", str(settings.data_dir))
    # Then acme's trail has each run, by whom, with how many records it rewrote (3 in all)
    entries = [json.loads(line) for line in listed.stdout.splitlines()]
    assert entries[0]["key"] == "system:cli" and entries[0]["count"] == 0, entries
    by_maintenance = [e["count"] for e in entries[1:] if e["key"] == "system:maintenance"]
    assert len(by_maintenance) == 2 and sum(by_maintenance) == 3, entries
