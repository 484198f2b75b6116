"""Who wrote it and what was done, on both stores (SQLite; OpenSearch on osmem-server): the server's
``createdBy`` on every stored observation and its filter, the ownership rule, and the audit trail
kept beside the observations (the embedded file's table; an index beside each workspace's),
filtered and paged the same on each."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from neural_memory.audit.trail import AuditQuery
from neural_memory.auth.roles import Caller
from neural_memory.clock import utcnow
from neural_memory.errors import Forbidden
from neural_memory.models import SearchRequest
from neural_memory.stores.base import read_one

from tests.helpers.pipeline import note
from tests.helpers.two_stores import svc

if TYPE_CHECKING:
    from neural_memory.service import Service

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
