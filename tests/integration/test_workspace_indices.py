"""An index per workspace on osmem-server: a workspace's first write creates its index from the
bootstrap's template (behind its alias and the alias over all of them), reads of a workspace that
never wrote find nothing and create nothing, the maintenance spans every workspace's index, the
workspace filter still guards each one, and the single index of earlier versions is copied per
workspace without overwriting what a workspace index already holds."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from neural_memory.domain.filters import Filter
from neural_memory.errors import ConfigurationError
from neural_memory.ingest import lifecycle
from neural_memory.service import Service
from neural_memory.stores.base import read_one
from neural_memory.stores.opensearch.index import OpenSearchAdmin
from neural_memory.stores.opensearch.migration import legacy_notice, migrate
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.opensearch.workspace_indices import WorkspaceIndices, all_alias, workspace_alias
from neural_memory.use_cases.reindexing import Reindexer
from opensearchpy import OpenSearch

from tests.helpers.fakes import HashEmbedder
from tests.helpers.pipeline import NOW, note

if TYPE_CHECKING:
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration
PREFIX = "nm"
ACME, RIVAL = workspace_alias(PREFIX, "acme"), workspace_alias(PREFIX, "rival")


def _service(client: OpenSearch, settings: Settings, embedder: HashEmbedder | None = None) -> Service:
    store = OpenSearchStore(client, PREFIX, refresh="true")
    return Service(store, embedder or HashEmbedder(), settings, clock=lambda: NOW)


def _found(service: Service, workspace: str, text: str) -> set[str]:
    hits = service.store.retrieve(workspace, text=text, vector=None, model_id=None, flt=Filter(live_at=NOW), limit=50)
    return {hit.observation.id for hit in hits.lexical}


def test_a_workspaces_first_write_creates_its_index_from_the_template(osmem_url: str, settings: Settings) -> None:
    client = OpenSearch(hosts=[osmem_url])
    svc = _service(client, settings)
    # Given no template yet (the bootstrap has not run): reads of a workspace find nothing and
    # create nothing, and a write is refused naming the bootstrap, leaving no index behind (never
    # one auto-created by a write to the alias)
    assert _found(svc, "acme", "deploy") == set() and svc.store.count("acme") == 0
    assert read_one(svc.store, "acme", "a1") is None and lifecycle.purge_expired(svc.store, NOW) == 0
    with pytest.raises(ConfigurationError, match="bootstrap"):
        svc.index("acme", [note("a1", "deploy note")])
    assert client.indices.get(index=f"{PREFIX}-ws-*") == {}
    # When the bootstrap has put the template and two workspaces write
    indices = WorkspaceIndices(client, PREFIX, replicas=0)
    assert indices.put_template(64, HashEmbedder().model_id) == "template created"
    assert indices.put_template(64, HashEmbedder().model_id) == "template ok"
    assert svc.index("acme", [note("a1", "deploy note")]).created == ["a1"]
    svc.index("rival", [note("r1", "deploy note of rival")])
    # Then each has its own index, behind its alias and the alias over every workspace
    assert client.indices.get_alias(index=f"{ACME}-000001") == {
        f"{ACME}-000001": {"aliases": {ACME: {}, all_alias(PREFIX): {}}}
    }
    assert indices.aliases() == sorted([ACME, RIVAL])
    # with the mapping and settings an index is created with by the bootstrap of one index
    OpenSearchAdmin(client, "today", replicas=0).ensure_index(64, HashEmbedder().model_id)
    mappings = client.indices.get_mapping(index=f"{ACME},today")
    assert mappings[f"{ACME}-000001"] == mappings["today-000001"]
    settings_of = client.indices.get_settings(index=f"{ACME},today")
    kept = ("knn", "knn.algo_param.ef_search", "number_of_shards", "number_of_replicas", "similarity")
    assert [{k: settings_of[i]["settings"]["index"][k] for k in kept} for i in (f"{ACME}-000001", "today-000001")] == [
        {k: settings_of["today-000001"]["settings"]["index"][k] for k in kept}
    ] * 2
    assert indices.admin(ACME).ensure_index(64, HashEmbedder().model_id) == "ok"
    # holding that workspace's documents alone
    assert client.count(index=ACME)["count"] == 1 and client.count(index=RIVAL)["count"] == 1
    assert _found(svc, "acme", "deploy") == {"a1"} and _found(svc, "rival", "deploy") == {"r1"}
    # And another process's first write to the same workspace, or a racing creation, finds it made
    assert _service(client, settings).index("acme", [note("a2", "deploy again")]).created == ["a2"]
    assert indices.create("acme") == ACME
    assert client.indices.get(index=f"{ACME}-0*").keys() == {f"{ACME}-000001"}  # (beside it: its audit trail's)


def test_a_domain_that_refuses_an_mget_of_a_missing_index_reads_as_empty(osmem_url: str, settings: Settings) -> None:
    from tests.helpers.opensearch_faults import FaultyDomain

    # Given a domain that answers an mget naming a missing index with a 404 for the whole request
    domain = FaultyDomain(osmem_url, max_body=10_000_000, mget_404=True)
    client = OpenSearch(hosts=[domain.url])
    WorkspaceIndices(client, PREFIX, replicas=0).put_template(64, HashEmbedder().model_id)
    svc = _service(client, settings)
    # Then a workspace that never wrote holds nothing (no error), and its first write creates its index
    assert read_one(svc.store, "acme", "a1") is None and svc.store.read("acme", ["a1", "a2"]) == {}
    assert svc.index("acme", [note("a1", "deploy note")]).created == ["a1"]
    assert read_one(svc.store, "acme", "a1") is not None
    domain.shutdown()


def test_the_workspace_filter_still_guards_each_index(osmem_url: str, settings: Settings) -> None:
    client = OpenSearch(hosts=[osmem_url])
    WorkspaceIndices(client, PREFIX, replicas=0).put_template(64, HashEmbedder().model_id)
    svc = _service(client, settings)
    svc.index("acme", [note("a1", "deploy note")])
    # Given a document of another workspace found in acme's index (a bug, an operator's copy)
    planted = {"workspace_id": "rival", "observation_id": "x", "chunk_no": 0, "title": "deploy secret"}
    client.index(index=ACME, id="acme:x:0", body=planted | {"text": "deploy secret"}, refresh=True)
    # Then acme reads none of it: searched, fetched by id, counted
    assert _found(svc, "acme", "deploy secret") == {"a1"}
    assert read_one(svc.store, "acme", "x") is None and svc.store.count("acme") == 1


def test_the_maintenance_spans_every_workspace_index(osmem_url: str, settings: Settings) -> None:
    client = OpenSearch(hosts=[osmem_url])
    indices = WorkspaceIndices(client, PREFIX, replicas=0)
    indices.put_template(64, HashEmbedder().model_id)
    svc = _service(client, settings.model_copy(update={"collaborative_after_window": "delete"}))
    old, older = NOW - timedelta(days=8), NOW - timedelta(days=31)
    # Given in each workspace a PR past its window and an old push
    for workspace in ("acme", "rival"):
        svc.index(
            workspace,
            [
                note("pr", "deploy PR", "a PR", observation_type="pull_request_opened", occurred_at=old),
                note("push", "deploy push", "a push", observation_type="push", occurred_at=older),
                note("adr", "deploy decision", "kept"),
            ],
        )
    # When the daily maintenance runs, Then it purges and archives in both
    assert svc.maintain(NOW) == {"purged": 2, "archived": 2, "unembedded": 0}
    for workspace in ("acme", "rival"):
        assert read_one(svc.store, workspace, "pr") is None and svc.store.count(workspace) == 2
        assert read_one(svc.store, workspace, "push").archived_at is not None  # type: ignore[union-attr]
    # And after acme's index is reindexed (another model), the alias over every workspace names
    # each one's live index only: the maintenance never sees a workspace twice
    new = _service(client, settings, HashEmbedder(dimension=32))
    assert Reindexer(new, indices.admin(ACME)).run().swapped
    assert set(client.indices.get_alias(name=all_alias(PREFIX))) == {f"{ACME}-000002", f"{RIVAL}-000001"}
    svc.index("acme", [note("pr2", "deploy PR", "a PR", observation_type="pull_request_opened", occurred_at=old)])
    assert svc.maintain(NOW)["purged"] == 1


def test_the_single_index_is_copied_per_workspace_without_overwriting(osmem_url: str, settings: Settings) -> None:
    client = OpenSearch(hosts=[osmem_url])
    model = HashEmbedder().model_id
    # Given the single index of an earlier version: a long note and another in acme, one in rival
    OpenSearchAdmin(client, PREFIX, replicas=0).ensure_index(64, model)
    legacy = Service(OpenSearchStore(client, PREFIX, refresh="true", single_index=True), HashEmbedder(), settings)
    long_text = " ".join(f"Sentence {i} about the acme queue." for i in range(200))
    legacy.index("acme", [note("doc", "acme runbook", long_text), note("other", "acme deploy", "fine")])
    legacy.index("rival", [note("r1", "rival deploy", "fine")])
    indices = WorkspaceIndices(client, PREFIX, replicas=0)
    assert "migrate-index" in (legacy_notice(indices) or "")
    # And the new writers already rewrote acme's long note, short now, in acme's own index
    indices.put_template(64, model)
    svc = _service(client, settings)
    svc.index("acme", [note("doc", "acme runbook", "Now short.")])
    # When the single index is copied per workspace
    report = migrate(indices)
    # Then every other observation is in its workspace's index, with its chunks and vectors as they were
    assert report.complete and report.workspaces == {"acme", "rival"} and not report.failed
    assert _found(svc, "acme", "deploy") == {"other"} and _found(svc, "rival", "deploy") == {"r1"}
    stored = client.get(index=ACME, id="acme:other:0")["_source"]
    assert stored == client.get(index=PREFIX, id="acme:other:0")["_source"] and "embedding" in stored
    # And the newer version was kept: none of the old long one's chunks came back
    assert read_one(svc.store, "acme", "doc").content == "Now short."  # type: ignore[union-attr]
    assert _found(svc, "acme", "Sentence 150") == set() and report.kept > 1
    # And the old index is marked, so neither the next bootstrap nor serve's start copies it again
    assert legacy_notice(indices) is None and migrate(indices).copied == 0
    assert client.count(index=PREFIX)["count"] == report.copied + report.kept


def test_a_migration_stopped_between_an_observations_chunks_copies_the_rest_next_time(
    osmem_url: str, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neural_memory.stores.opensearch import migration

    client = OpenSearch(hosts=[osmem_url])
    model = HashEmbedder().model_id
    # Given the single index holding a note of many chunks
    OpenSearchAdmin(client, PREFIX, replicas=0).ensure_index(64, model)
    legacy = Service(OpenSearchStore(client, PREFIX, refresh="true", single_index=True), HashEmbedder(), settings)
    legacy.index("acme", [note("doc", "acme runbook", " ".join(f"Sentence {i} about the queue." for i in range(200)))])
    chunks = client.count(index=PREFIX)["count"]
    assert chunks > 4
    indices = WorkspaceIndices(client, PREFIX, replicas=0)
    indices.put_template(64, model)
    # When a run copies two chunks a page and its deadline passes after the first page
    monkeypatch.setattr(migration, "PAGE", 2)
    clock = iter([0.0])  # the deadline is read before each page: the first in time, then past it
    monkeypatch.setattr(migration, "monotonic", lambda: next(clock, 2.0))
    cut = migrate(indices, deadline=1.0)
    assert not cut.complete and cut.copied == 2
    # Then the next run copies the other chunks (the record it finds is the one it copied itself)
    monkeypatch.setattr(migration, "monotonic", lambda: 0.0)
    done = migrate(indices, deadline=1.0)
    assert done.complete and done.copied == chunks - 2 and done.kept == 2
    client.indices.refresh(index=all_alias(PREFIX))
    assert client.count(index=ACME)["count"] == chunks
    assert _found(_service(client, settings), "acme", "Sentence 150") == {"doc"}


def test_an_empty_single_index_migrates_to_nothing_and_is_marked(osmem_url: str, settings: Settings) -> None:
    client = OpenSearch(hosts=[osmem_url])
    OpenSearchAdmin(client, PREFIX, replicas=0).ensure_index(64, HashEmbedder().model_id)
    indices = WorkspaceIndices(client, PREFIX, replicas=0)
    report = migrate(indices)
    assert report.complete and report.copied == 0 and report.workspaces == set()
    assert legacy_notice(indices) is None
