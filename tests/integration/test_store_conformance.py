"""One conformance suite for both stores: the SQLite store, and the OpenSearch store on
osmem-server (started by the tests; it has no k-NN, so vector retrieval is checked on SQLite and
the k-NN request body against OpenSearch's documented format)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.domain import bm25
from neural_memory.domain.filters import Filter
from neural_memory.errors import ConfigurationError, StoreModelMismatch
from neural_memory.ingest import lifecycle
from neural_memory.ingest.turn_context import previous_in_session
from neural_memory.models import Chunk, ObservationIn, ObservationRecord, SearchFilters
from neural_memory.service import Service
from neural_memory.stores.base import IndexedObservation, read_one
from neural_memory.stores.find import Find
from neural_memory.stores.opensearch.dsl import cosine_from_score, knn_body, render_opensearch
from neural_memory.stores.opensearch.index import OpenSearchAdmin
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.opensearch.workspace_indices import WorkspaceIndices, workspace_alias
from neural_memory.stores.record_fields import FIELD_NAMES, RECORD_FIELDS
from neural_memory.stores.sqlite.store import SqliteStore
from opensearchpy import OpenSearch

from tests.helpers.events import ROOT
from tests.helpers.fakes import HashEmbedder
from tests.helpers.filter_cases import CASES, DATA, exclusion, matches, tier_of
from tests.helpers.pipeline import NOW, note
from tests.helpers.two_stores import INDEX

if TYPE_CHECKING:
    from pathlib import Path

    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration


def _ids(service: Service, query: str = "acme", **fields: Any) -> set[str]:
    from neural_memory.models import SearchRequest

    body = SearchRequest.model_validate({"query": query, "topK": 100, "mode": "keyword", "llmFilter": False, **fields})
    return {r.id for r in service.search("acme", body, "r").results}


def test_every_filter_returns_exactly_the_matching_observations(svc: Service) -> None:
    # Given the filter suite's ten observations (one expired)
    svc.index("acme", [ObservationIn.model_validate(o) for o in DATA])
    # When each filter case is searched, Then exactly the matching ones come back
    for name, filters, exclude in CASES:
        extra: dict[str, Any] = {"filters": filters} if filters else {}
        extra |= exclusion(exclude)
        assert _ids(svc, **extra) == {o["id"] for o in DATA if matches(o, filters, exclude)}, name


class OtherModel(HashEmbedder):
    """The same vectors under another model's name: what a model change of equal dimension looks like."""

    @property
    def model_id(self) -> str:
        return "another-model-64"


def test_vectors_of_another_model_are_never_compared_with_the_query(settings: Settings, osmem_url: str) -> None:
    from neural_memory.models import SearchRequest

    query = {"query": "deploy failed on friday", "mode": "semantic", "llmFilter": False}
    semantic = SearchRequest.model_validate(query)
    # Given an observation embedded by the service's model (the embedded store)
    svc = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    svc.index("acme", [note("a1", "deploy failed on friday")])
    assert [r.id for r in svc.search("acme", semantic, "r").results] == ["a1"]
    # When the same store is searched with another model of the same dimension, Then no vector of
    # the first model is compared with its query vector, identical as the numbers are: the search
    # is refused, naming the command that rebuilds the store for that model
    with pytest.raises(StoreModelMismatch, match=r"neural-memory reindex --data-dir"):
        Service(svc.store, OtherModel(), settings, clock=lambda: NOW).search("acme", semantic, "r")
    # And OpenSearch (osmem has no k-NN: the request is checked) asks for the query's model only
    sent: list[Any] = []
    client = OpenSearch(hosts=[osmem_url])
    WorkspaceIndices(client, INDEX).put_template(64, "test-hash-64")

    class Recording:
        def __getattr__(self, name: str) -> Any:
            return getattr(client, name)

        def msearch(self, **kwargs: Any) -> Any:
            sent.append(kwargs["body"])
            return client.msearch(**kwargs)

    store = OpenSearchStore(Recording(), INDEX, refresh="true")
    store.retrieve("acme", text="deploy", vector=[0.1] * 64, model_id="test-hash-64", flt=Filter(live_at=NOW), limit=5)
    knn = sent[0][3]["query"]["knn"]["embedding"]["filter"]["bool"]["filter"]
    assert {"term": {"model_id": "test-hash-64"}} in knn and {"term": {"workspace_id": "acme"}} in knn


def test_tenancy(svc: Service) -> None:
    svc.index("acme", [note("a1", "acme deploy")])
    svc.index("rival", [note("r1", "acme deploy")])
    assert _ids(svc) == {"a1"}
    assert read_one(svc.store, "rival", "a1") is None and svc.store.delete("rival", "a1") is False
    assert read_one(svc.store, "acme", "a1") is not None
    assert (svc.store.count("acme"), svc.store.count("rival")) == (1, 1)


def _keyword_scores(svc: Service, workspace: str, query: str) -> dict[str, float]:
    hits = svc.store.retrieve(workspace, text=query, vector=None, model_id=None, flt=Filter(live_at=NOW), limit=50)
    return {hit.observation.id: round(hit.score, 6) for hit in hits.lexical}


def test_a_workspaces_keyword_scores_do_not_depend_on_another_workspaces_data(svc: Service) -> None:
    # Given acme's notes, where the query's two words are unevenly common (idf and length both count;
    # titles of unequal length, as OpenSearch's best-field match scores a title alone for two of them)
    svc.index(
        "acme",
        [
            note("a1", "kafka consumer lag", "the consumer fell behind the kafka topic"),
            note("a2", "kafka broker restart for the upgrade", "a broker restarted during the upgrade window"),
            note("a3", "consumer group rebalance", "a consumer group rebalanced twice, slowly and noisily"),
        ],
    )
    before = _keyword_scores(svc, "acme", "kafka consumer")
    assert len(before) == 3 and len(set(before.values())) == 3, before
    # When rival adds notes holding one of the query's words (long ones: the average length moves too)
    rival = [note(f"r{n}", f"kafka partition {n}", "kafka " * 40 + f"note {n}") for n in range(10)]
    svc.index("rival", rival)
    during = _keyword_scores(svc, "acme", "kafka consumer")
    # And then deletes them
    for observation in rival:
        assert svc.store.delete("rival", str(observation.id))
    after = _keyword_scores(svc, "acme", "kafka consumer")
    # Then acme's scores are identical throughout: nothing of rival's is measurable from acme
    assert during == before and after == before, (before, during, after)


def test_ttl_tiers_and_purge(svc: Service) -> None:
    old = NOW - timedelta(days=8)
    svc.index(
        "acme",
        [
            note("adr", "acme decision", occurred_at=old),
            note("pr-old", "acme PR", observation_type="pull_request_opened", occurred_at=old),
            note("pr-new", "acme PR new", observation_type="pull_request_opened"),
            note("push", "acme push", observation_type="push", occurred_at=old),
        ],
    )
    # Age hides nothing (the PR past its window is kept, by its words); a filter at NOW hides it
    assert _ids(svc) == {"adr", "pr-new", "push", "pr-old"}
    hits = svc.store.retrieve("acme", text="acme", vector=None, model_id=None, flt=Filter(live_at=NOW), limit=10)
    assert {h.observation.id for h in hits.lexical} == {"adr", "pr-new", "push"}
    assert read_one(svc.store, "acme", "push").tier == "E"  # type: ignore[union-attr]
    assert lifecycle.purge_expired(svc.store, NOW) == 1
    assert read_one(svc.store, "acme", "pr-old") is None and svc.store.count("acme") == 3


def test_write_is_idempotent_and_drops_stale_chunks(svc: Service) -> None:
    long_text = " ".join(f"Sentence {i} about the acme queue." for i in range(200))
    first = svc.index("acme", [note("doc", "acme runbook", long_text)])
    again = svc.index("acme", [note("doc", "acme runbook", long_text)])
    assert (first.created, again.updated) == (["doc"], ["doc"]) and svc.store.count("acme") == 1
    # When the document becomes short, Then its old later chunks no longer match
    svc.index("acme", [note("doc", "acme runbook", "Now short.")])
    assert _ids(svc, query="Sentence 150") == set()
    assert read_one(svc.store, "acme", "doc").content == "Now short."  # type: ignore[union-attr]


def test_a_hit_in_a_later_chunk_returns_the_whole_parent_once(svc: Service) -> None:
    body = " ".join(f"Step {i}: restart the worker." for i in range(150)) + " Finally renew the kerberos ticket."
    svc.index("acme", [note("runbook", "worker runbook", body)])
    hits = svc.store.retrieve("acme", text="kerberos", vector=None, model_id=None, flt=Filter(live_at=NOW), limit=10)
    assert [h.observation.id for h in hits.lexical] == ["runbook"]
    assert hits.lexical[0].chunk_no > 0
    assert hits.lexical[0].observation.content == body
    assert all(0.0 <= h.score <= 1.0 for h in hits.lexical)


def test_delete_removes_every_chunk(svc: Service) -> None:
    svc.index("acme", [note("doc", "acme runbook", " ".join(["acme queue"] * 400))])
    assert svc.store.delete("acme", "doc") is True
    assert read_one(svc.store, "acme", "doc") is None and _ids(svc) == set()
    assert svc.store.delete("acme", "doc") is False


def test_hybrid_on_osmem_answers_from_lexical_and_names_the_vector_stage(osmem_url: str, settings: Settings) -> None:
    # Given the OpenSearch store on osmem, which has no k-NN
    client = OpenSearch(hosts=[osmem_url])
    WorkspaceIndices(client, INDEX).put_template(64, "test-hash-64")
    service = Service(OpenSearchStore(client, INDEX, refresh="true"), HashEmbedder(), settings, clock=lambda: NOW)
    service.index("acme", [note("a", "acme deploy failed")])
    from neural_memory.models import SearchRequest

    # When searching in hybrid mode, Then lexical answers and the reply names the failed vector stage
    body = {"query": "deploy failed", "llmFilter": False, "rerank": "fast"}
    reply = service.search("acme", SearchRequest.model_validate(body), "r")
    assert [r.id for r in reply.results] == ["a"]
    assert len(reply.degraded) == 1 and reply.degraded[0].startswith("vector:failed")


def test_index_bootstrap_is_idempotent_and_refuses_another_model(osmem_url: str) -> None:
    client = OpenSearch(hosts=[osmem_url])
    admin = OpenSearchAdmin(client, "nm-boot", replicas=0)
    assert admin.ensure_index(64, "model-a") == "created"
    assert admin.ensure_index(64, "model-a") == "ok"
    # The service's name is an alias of a versioned physical index (a reindex can replace it)
    assert client.indices.get_alias(index="nm-boot") == {"nm-boot-000001": {"aliases": {"nm-boot": {}}}}
    # A single node holds every shard of an index without replicas: green, not yellow for good
    assert client.cluster.health(index="nm-boot")["status"] == "green"
    # A stage with more nodes keeps the replica count in step at its next bootstrap
    assert OpenSearchAdmin(client, "nm-boot", replicas=2).ensure_index(64, "model-a") == "replicas updated"
    settings = client.indices.get_settings(index="nm-boot")["nm-boot-000001"]["settings"]
    assert settings["index"]["number_of_replicas"] == "2"
    with pytest.raises(ConfigurationError, match="model-b"):
        admin.ensure_index(64, "model-b")
    with pytest.raises(ConfigurationError, match="128"):
        admin.ensure_index(128, "model-a")


def _similarity(client: OpenSearch, index: str) -> dict[str, str]:
    return client.indices.get_settings(index=index)[index]["settings"]["index"]["similarity"]["default"]  # type: ignore[no-any-return]


def test_opensearch_scores_bm25_with_the_embedded_stores_k1_and_b(osmem_url: str, settings: Settings) -> None:
    from neural_memory.stores.opensearch.mapping import SCHEMA_VERSION
    from neural_memory.use_cases.reindexing import Reindexer

    client = OpenSearch(hosts=[osmem_url])
    # A new index is created with the k1 and b the embedded store's BM25 uses
    assert OpenSearchAdmin(client, "nm-bm25", replicas=0).ensure_index(64, "model-a") == "created"
    assert _similarity(client, "nm-bm25-000001") == {"type": "BM25", "k1": str(bm25.K1), "b": str(bm25.B)}
    # Given an index of the schema before them (OpenSearch's defaults, k1 1.2 and b 0.75)
    admin = OpenSearchAdmin(client, "nm-old", replicas=0)
    admin.ensure_index(64, HashEmbedder().model_id)
    client.indices.put_mapping(
        index="nm-old-000001", body={"_meta": admin.meta("nm-old-000001") | {"schema_version": SCHEMA_VERSION - 1}}
    )
    # When the service starts, Then it asks for a reindex; and the reindex brings the index in step
    with pytest.raises(ConfigurationError, match="reindex"):
        admin.ensure_index(64, HashEmbedder().model_id)
    service = Service(OpenSearchStore(client, "nm-old", single_index=True), HashEmbedder(), settings, clock=lambda: NOW)
    assert Reindexer(service, admin).run().swapped
    assert _similarity(client, "nm-old-000002") == {"type": "BM25", "k1": str(bm25.K1), "b": str(bm25.B)}
    assert admin.ensure_index(64, HashEmbedder().model_id) == "ok"


def test_knn_body_follows_the_documented_format_with_the_same_filter() -> None:
    # Given a filter and the lexical filter list built from it
    flt = Filter(live_at=NOW, sources=("github",), exclude_session_id="s1")
    filters = [{"term": {"workspace_id": "acme"}}, *render_opensearch(flt)]
    # When the k-NN body is built
    body = knn_body([0.1, 0.2], filters, 40)
    # Then it is OpenSearch's k-NN query with the filter *inside* the knn clause and size set
    assert body == {
        "size": 40,
        "_source": {"excludes": ["embedding"]},
        "query": {"knn": {"embedding": {"vector": [0.1, 0.2], "k": 40, "filter": {"bool": {"filter": filters}}}}},
    }
    assert body["query"]["knn"]["embedding"]["filter"]["bool"]["filter"] is filters


@pytest.mark.parametrize(("score", "cosine"), [(2.0, 1.0), (1.5, 0.5), (1.0, 0.0), (0.5, 0.0)])
def test_faiss_inner_product_scores_map_back_to_cosine(score: float, cosine: float) -> None:
    assert cosine_from_score(score) == pytest.approx(cosine)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_with_the_opensearch_store(osmem_url: str, tmp_path: Path) -> None:
    # Given `neural-memory serve --store opensearch` against osmem
    port = _free_port()
    args = [sys.executable, "-m", "neural_memory.local.cli", "serve", "--port", str(port), "--quiet",
            "--data-dir", str(tmp_path), "--store", "opensearch", "--opensearch-url", osmem_url,
            "--samples", str(ROOT / "events")]  # fmt: skip
    env = {**os.environ, "NM_OPENSEARCH_REFRESH": "true", "POWERTOOLS_METRICS_DISABLED": "true"}
    server = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        key = None
        while time.monotonic() < deadline and key is None:
            key_file = tmp_path / "demo-api-key"
            if key_file.exists() and _answers(port):
                key = key_file.read_text().strip()
            time.sleep(0.2)
        assert key, server.stdout.read() if server.poll() is not None and server.stdout else "server did not start"
        # When the README's hybrid search is sent
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/search",
            data=json.dumps({"query": "why did the deploy fail", "topK": 5}).encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:  # loopback
            status, body = response.status, json.loads(response.read())
        # Then it answers 200 from lexical results and names the vector stage in degraded
        assert status == 200
        assert "note-deploy-env-vars" in [r["id"] for r in body["results"]]
        assert any(d.startswith("vector:failed") for d in body["degraded"])
    finally:
        server.terminate()
        server.wait(timeout=10)


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _every_field_set() -> ObservationRecord:
    """A record whose every field holds a value (not a default), derived from the one declaration."""
    samples: dict[str, Any] = {
        "keyword": "k",
        "text": "acme roundtrip title",
        "stored": "acme roundtrip content",
        "json": {"nested": [1, "two", {"three": True}]},
        "keywords": ["first", "second"],
        "integer": 7,
        "float": 0.25,
        "boolean": True,
    }
    values: dict[str, Any] = {}
    for n, field in enumerate(RECORD_FIELDS):
        if field.kind == "time":
            values[field.name] = NOW + timedelta(days=n, milliseconds=n)
        else:
            values[field.name] = f"{field.name}-value" if field.kind == "keyword" else samples[field.kind]
    return ObservationRecord(**{**values, "id": "roundtrip", "tier": "A", "trust": "outside"})


def test_every_record_field_round_trips(svc: Service) -> None:
    # Given a record with every stored field set (fields come from ObservationRecord alone)
    record = _every_field_set()
    svc.store.write("acme", [IndexedObservation(record=record, chunks=[Chunk(chunk_no=0, text=record.content)])])
    # When it is read back and retrieved, Then every field comes back as written: a store that
    # forgets a field of the model fails here, naming it
    read = read_one(svc.store, "acme", "roundtrip")
    assert read is not None
    assert {name: getattr(read, name) for name in FIELD_NAMES} == {name: getattr(record, name) for name in FIELD_NAMES}
    later = record.occurred_at - timedelta(days=1)
    flt = Filter(live_at=later, include_superseded=True, include_archived=True)  # superseded_by, archived_at set too
    hits = svc.store.retrieve("acme", text="roundtrip", vector=None, model_id=None, flt=flt, limit=5)
    assert [hit.observation for hit in hits.lexical] == [record]


def test_metadata_no_filter_can_match_is_stored_and_never_breaks_a_filtered_search(svc: Service) -> None:
    # Given observations whose metadata holds an integer no double holds, a negative zero and a
    # key with the term separator in it
    svc.index("acme", [note("n1", "acme metadata", metadata={"huge": 10**400, "zero": -0.0, "a=s:x": "y"})])
    svc.index("acme", [note("n2", "acme metadata", metadata={"a": "x=s:y"})])
    # When filtering on them, Then both stores answer the same, and 0 finds -0.0
    assert _ids(svc, filters={"metadata": {"zero": 0}}) == {"n1"}
    assert _ids(svc, filters={"metadata": {"a": "x=s:y"}}) == {"n2"}
    assert _ids(svc, filters={"metadata": {"a=s:x": "y"}}) == {"n1"}
    assert svc.get("acme", "n1", "r").metadata["huge"] == 10**400


# The filter cases facets take (list fields, their exclusions, dates): not metadata, groups or sessions.
FACET_CASES = [
    (name, filters) for name, filters, exclude in CASES if exclude is None and not {"metadata", "anyOf"} & set(filters)
]
_FACET_FIELDS = {"sourceTypes": "source", "observationTypes": "observationType", "actorNames": "actorName"}


def _expected_facets(filters: dict[str, Any]) -> dict[str, Any]:
    """The oracle: each field counted over the observations matching every filter but its own."""
    expected: dict[str, Any] = {}
    for name in ("sourceTypes", "observationTypes", "actorNames", "tiers"):
        others = {key: value for key, value in filters.items() if key != name}
        if "not" in filters:
            others["not"] = {key: value for key, value in filters["not"].items() if key != name}
        counts = Counter(
            tier_of(o) if name == "tiers" else o[_FACET_FIELDS[name]] for o in DATA if matches(o, others, None)
        )
        expected[name] = sorted(([value, n] for value, n in counts.items()), key=lambda pair: (-pair[1], pair[0]))
    return expected


def _facets(svc: Service, workspace: str, filters: dict[str, Any] | None = None, limit: int = 20) -> dict[str, Any]:
    chosen = SearchFilters.model_validate(filters) if filters else None
    reply = svc.facets(workspace, chosen, limit, "r").model_dump(by_alias=True)
    counted = {name: [[c["value"], c["count"]] for c in pairs] for name, pairs in reply["facets"].items()}
    # (the counts under the filters' names, and under their first names for a release: the same)
    assert counted.pop("sources") == counted["sourceTypes"] and counted.pop("actors") == counted["actorNames"]
    return {"total": reply["total"], **counted}


def test_facets_count_each_value_under_the_other_filters(svc: Service) -> None:
    # Given the filter suite's observations (one expired), and another workspace's
    svc.index("acme", [ObservationIn.model_validate(o) for o in DATA])
    svc.index("rival", [note("r1", "rival note", actor_name="mallory", tier="A")])
    # When facets are asked under each filter case, Then every field counts the live observations
    # matching every other filter, the most frequent first, and the total matches them all
    for name, filters in FACET_CASES:
        total = sum(1 for o in DATA if matches(o, filters, None))
        assert _facets(svc, "acme", filters) == {"total": total, **_expected_facets(filters)}, name
    # And another workspace's values are never counted (tenancy in the store)
    assert _facets(svc, "rival") == {
        "total": 1,
        "sourceTypes": [["manual", 1]],
        "observationTypes": [["note", 1]],
        "actorNames": [["mallory", 1]],
        "tiers": [["A", 1]],
    }
    assert _facets(svc, "nobody") == {
        "total": 0, "sourceTypes": [], "observationTypes": [], "actorNames": [], "tiers": []
    }  # fmt: skip


def test_facets_keep_to_the_limit_and_leave_out_superseded_observations(svc: Service) -> None:
    # Given three notes by two actors, one superseded by a later one
    svc.index("acme", [note("n1", "old plan", actor_name="ana"), note("n2", "other", actor_name="bo")])
    svc.index("acme", [note("n3", "new plan", actor_name="ana", supersedes=["n1"])])
    # When facets are asked for one value per field, Then the most frequent value (ties by value),
    # counting current observations only
    assert _facets(svc, "acme", limit=1) == {
        "total": 2,
        "sourceTypes": [["manual", 2]],
        "observationTypes": [["note", 2]],
        "actorNames": [["ana", 1]],
        "tiers": [["A", 2]],
    }


def test_long_content_is_searched_by_bm25_in_windows_and_by_vector_in_passages(svc: Service) -> None:
    from neural_memory.ingest.prepare import chunked

    # Given a long runbook (cut into passages for vectors and windows for BM25) and a short note
    body = " ".join(f"Step {i}: restart the worker." for i in range(150)) + " Finally renew the kerberos ticket."
    svc.index("acme", [note("runbook", "worker runbook", body), note("short", "kerberos", "renew the ticket")])
    stored = read_one(svc.store, "acme", "runbook")
    assert stored is not None
    layout = chunked(stored, svc.settings.chunking).chunks
    passages = [c.chunk_no for c in layout if c.role == "passage"]
    windows = [c.chunk_no for c in layout if c.role == "lexical"]
    assert passages == list(range(len(passages))) and len(passages) > len(windows) > 1
    # When searching words of its title and of its text, Then BM25 finds it only by its windows
    # (a passage carries the title but is never a lexical hit)
    found = svc.store.retrieve(
        "acme", text="worker kerberos", vector=None, model_id=None, flt=Filter(live_at=NOW), limit=100
    )
    assert {h.observation.id for h in found.lexical} == {"runbook", "short"}
    assert {h.chunk_no for h in found.lexical if h.observation.id == "runbook"} <= set(windows)
    embedder = svc.embedder
    assert embedder is not None
    if isinstance(svc.store, SqliteStore):
        # And vector search finds it only by its passages
        vector = embedder.embed(["restart the worker"], "search_query")[0]
        by_vector = svc.store.retrieve(
            "acme", text=None, vector=vector, model_id=embedder.model_id, flt=Filter(live_at=NOW), limit=100
        )
        assert {h.chunk_no for h in by_vector.vector if h.observation.id == "runbook"} == set(passages)
    else:
        # And OpenSearch (osmem has no k-NN) holds passages with a vector and no text field, windows
        # with text and no vector (no new field: an index of the same schema takes both as they are)
        client = svc.store._client  # type: ignore[attr-defined]
        for chunk_no in (passages[-1], windows[0]):
            doc = client.get(index=workspace_alias(INDEX, "acme"), id=f"acme:runbook:{chunk_no}")["_source"]
            is_passage = chunk_no in passages
            assert ("embedding" in doc, "text" in doc) == (is_passage, not is_passage)


def test_without_an_embedder_long_content_is_cut_once_and_searched_by_bm25(settings: Settings) -> None:
    # Given a service with no embedder (NM_EMBEDDER=none): a passage would be searched by nothing
    service = Service(SqliteStore(settings.sqlite_path), None, settings, clock=lambda: NOW)
    body = " ".join(f"Step {i}: restart the worker." for i in range(150)) + " Finally renew the kerberos ticket."
    service.index("acme", [note("runbook", "worker runbook", body)])
    # Then every chunk is a lexical one, and BM25 finds the end of the text
    conn = service.store._reader().conn  # type: ignore[attr-defined]
    assert [row[0] for row in conn.execute("SELECT DISTINCT lexical FROM chunks")] == [1]
    assert _ids(service, query="kerberos") == {"runbook"}


def _turn(obs_id: str, content: str, minutes_ago: int, session: str = "chat-1") -> ObservationIn:
    fields = {"id": obs_id, "source": "chat", "observationType": "message", "sessionId": session, "tier": "A"}
    fields |= {"occurredAt": (NOW - timedelta(minutes=minutes_ago)).isoformat(), "content": content}
    return ObservationIn.model_validate(fields)


def test_the_turn_before_in_a_session_is_found_in_its_workspace_and_session_only(svc: Service) -> None:
    # Given two turns of a session, one of another session, and the same session id in another workspace
    svc.index(
        "acme", [_turn("a1", "first turn", 30), _turn("a2", "second turn", 20), _turn("b1", "elsewhere", 10, "x")]
    )
    svc.index("rival", [_turn("r1", "rival turn", 15)])
    # When asked for the turn before a moment, Then it is the latest strictly before, of that session
    assert (found := previous_in_session(svc.store, "acme", "chat-1", NOW)) is not None and found.id == "a2"
    assert (found := previous_in_session(svc.store, "acme", "chat-1", NOW - timedelta(minutes=20))) is not None
    assert found.id == "a1"
    assert previous_in_session(svc.store, "acme", "chat-1", NOW - timedelta(minutes=30)) is None
    assert previous_in_session(svc.store, "acme", "nope", NOW) is None


def test_find_returns_every_record_of_its_workspace_in_time_then_id_order_either_way(svc: Service) -> None:
    # Given two records at one moment, an older one past its window, and a record of another workspace
    old = NOW - timedelta(days=8)
    svc.index(
        "acme",
        [
            note("b", "acme b", occurred_at=NOW - timedelta(hours=1)),
            note("a", "acme a", occurred_at=NOW - timedelta(hours=1)),
            note("pr-old", "acme PR", observation_type="pull_request_opened", occurred_at=old),
            note("c", "acme c"),
        ],
    )
    svc.index("rival", [note("r", "rival", occurred_at=NOW + timedelta(hours=1))])
    # When found with no condition, Then every record of the workspace (the expired one too), ties by id
    assert [r.id for r in svc.store.find("acme", Find())] == ["pr-old", "a", "b", "c"]
    assert [r.id for r in svc.store.find("acme", Find(newest_first=True))] == ["c", "b", "a", "pr-old"]
    # And a limit cuts the same records on every store
    assert [r.id for r in svc.store.find("acme", Find(newest_first=True, limit=2))] == ["c", "b"]
    assert [r.id for r in svc.store.find("acme", Find(occurred_before=NOW, limit=2))] == ["pr-old", "a"]
    assert svc.store.find("nobody", Find()) == []


def test_find_by_what_records_supersede_returns_those_naming_any_of_the_ids(svc: Service) -> None:
    # Given a chain a <- b <- c, d superseding a and x, and the same links in another workspace
    hour = timedelta(hours=1)
    svc.index(
        "acme",
        [
            note("a", "acme a", occurred_at=NOW - 4 * hour),
            note("b", "acme b", occurred_at=NOW - 3 * hour, supersedes=["a"]),
            note("c", "acme c", occurred_at=NOW - 2 * hour, supersedes=["b"]),
            note("d", "acme d", occurred_at=NOW - 2 * hour, supersedes=["x", "a"]),
        ],
    )
    svc.index("rival", [note("r", "rival", supersedes=["a"])])
    # When found by what they supersede, Then those naming any of the ids, newest first, ties by id
    assert [r.id for r in svc.store.find("acme", Find(supersedes_any=("a",), newest_first=True))] == ["d", "b"]
    assert [r.id for r in svc.store.find("acme", Find(supersedes_any=("b", "x")))] == ["c", "d"]
    assert svc.store.find("acme", Find(supersedes_any=("c",))) == []
    # And as many ids as a batch's relink asks for at once
    many = tuple(f"absent-{n}" for n in range(1500)) + ("x",)
    assert [r.id for r in svc.store.find("acme", Find(supersedes_any=many))] == ["d"]


def test_a_turn_written_alone_is_found_by_what_it_answers_and_shows_only_its_own_words(svc: Service) -> None:
    if isinstance(svc.store, OpenSearchStore):
        pytest.skip("osmem has no k-NN: this is the vector side of a turn's context (the keyword side: below)")
    # Given a question, then its answer written on its own (as an agent remembers turn by turn)
    svc.index("acme", [_turn("q", "did the zeppelin migration finish", 10)])
    svc.index("acme", [_turn("a", "Yes, last Tuesday.", 5)])
    # When searching by vector for the question's words
    from neural_memory.models import SearchRequest

    body = {"query": "zeppelin migration", "topK": 5, "mode": "semantic", "llmFilter": False}
    results = svc.search("acme", SearchRequest.model_validate(body), "r").results
    # Then the answer is found too (through its context), and its snippet is its own content
    assert {"q", "a"} <= {r.id for r in results}
    assert next(r for r in results if r.id == "a").snippet == "Yes, last Tuesday."


def test_a_turn_written_alone_is_found_by_keyword_through_what_it_answers(svc: Service) -> None:
    # Given a question, then its answer written on its own (as an agent remembers turn by turn)
    svc.index("acme", [_turn("q", "did the zeppelin migration finish", 10)])
    svc.index("acme", [_turn("a", "Yes, last Tuesday.", 5)])
    # When searching by keyword for the question's words
    from neural_memory.models import SearchRequest

    body = {"query": "zeppelin migration", "topK": 5, "mode": "keyword", "llmFilter": False}
    results = svc.search("acme", SearchRequest.model_validate(body), "r").results
    # Then the answer is found too (its context chunk holds the question), showing its own words
    assert [r.id for r in results] == ["q", "a"]
    assert results[1].snippet == "Yes, last Tuesday."


def test_a_deleted_turns_words_are_not_found_through_the_turns_after_it(svc: Service) -> None:
    # Given a question, its answer and a reply, remembered one by one (each quotes those before)
    svc.index("acme", [_turn("q", "my locker code is zebraquokka", 30)])
    svc.index("acme", [_turn("a", "Noted.", 20)])
    svc.index("acme", [_turn("b", "Anything else?", 10)])
    svc.index("acme", [_turn("c", "No, thanks.", 5)])
    from neural_memory.models import SearchRequest

    body = {"query": "zebraquokka", "topK": 10, "mode": "keyword", "llmFilter": False}
    assert {r.id for r in svc.search("acme", SearchRequest.model_validate(body), "r").results} == {"q", "a", "b"}
    # When the question is deleted
    svc.delete("acme", "q", "r")
    # Then its words are found nowhere, and the turns after it still read their own context
    assert svc.search("acme", SearchRequest.model_validate(body), "r").results == []
    body = {"query": "Noted", "topK": 10, "mode": "keyword", "llmFilter": False}
    assert {r.id for r in svc.search("acme", SearchRequest.model_validate(body), "r").results} == {"a", "b", "c"}


def test_a_purged_turns_words_are_not_found_through_the_turns_after_it(svc: Service) -> None:
    # Given C past their window deleted (not kept by their words), and a C question eight days old
    # answered by a turn kept for good (A), whose context quotes the question
    deleting = Service(
        svc.store,
        svc.embedder,
        svc.settings.model_copy(update={"collaborative_after_window": "delete"}),
        clock=lambda: NOW,
    )
    asked = NOW - timedelta(days=8)
    question = _turn("q", "my locker code is zebraquokka", 0).model_copy(update={"tier": "C", "occurred_at": asked})
    answer = _turn("a", "Noted.", 0).model_copy(update={"occurred_at": asked + timedelta(minutes=1)})
    deleting.index("acme", [question])
    deleting.index("acme", [answer])
    from neural_memory.models import SearchRequest

    body = SearchRequest.model_validate({"query": "zebraquokka", "topK": 10, "mode": "keyword", "llmFilter": False})
    # When the daily maintenance purges the expired question
    assert deleting.maintain(NOW)["purged"] == 1
    # Then its words are found nowhere, and the answer still reads its own words
    assert deleting.search("acme", body, "r").results == []
    noted = SearchRequest.model_validate({"query": "Noted", "topK": 10, "mode": "keyword", "llmFilter": False})
    assert [r.id for r in deleting.search("acme", noted, "r").results] == ["a"]


# ----------------------------------------------------------------------------- the tier lifecycle's writes


def _long(obs_id: str, observation_type: str, tail: str, **extra: Any) -> ObservationIn:
    """An observation of many chunks whose last words (``tail``) only its last chunk holds."""
    body = " ".join(f"Line {n} of the build log says nothing in particular." for n in range(400))
    return note(obs_id, f"{obs_id} log", f"{body} {tail}", observation_type=observation_type, **extra)


def _read(svc: Service, workspace: str, observation_id: str) -> ObservationRecord:
    record = read_one(svc.store, workspace, observation_id)
    assert record is not None, (workspace, observation_id)
    return record


def test_restate_changes_every_chunk_and_only_lifecycle_fields(svc: Service) -> None:
    # Given a long C observation (many chunks), and the same id in another workspace
    svc.index("acme", [_long("c1", "conversation_turn", "zanzibar")])
    svc.index("rival", [_long("c1", "conversation_turn", "zanzibar")])
    # When it is promoted in acme
    fields = {"tier": "A", "expires_at": None, "promoted_at": NOW, "promoted_by": "key:k", "promotion_reason": "why"}
    record = lifecycle.restate(svc.store, "acme", "c1", fields)
    # Then the record says so, and a search by the last chunk's word under tier A finds it after
    # it would have expired, while rival's copy is untouched
    assert record is not None and (record.tier, record.expires_at, record.promoted_by) == ("A", None, "key:k")
    late = Filter(live_at=NOW + timedelta(days=30), tiers=("A",))
    hits = svc.store.retrieve("acme", text="zanzibar", vector=None, model_id=None, flt=late, limit=5).lexical
    assert [(h.observation.id, h.observation.tier) for h in hits] == [("c1", "A")] and hits[0].chunk_no > 0
    assert svc.store.retrieve("rival", text="zanzibar", vector=None, model_id=None, flt=late, limit=5).lexical == []
    assert _read(svc, "rival", "c1").tier == "C"
    # And another workspace's id is not found; a field that is not the lifecycle's is refused
    assert lifecycle.restate(svc.store, "rival", "missing", {"tier": "A"}) is None
    with pytest.raises(ValueError, match="restate sets only"):
        lifecycle.restate(svc.store, "acme", "c1", {"title": "renamed"})


def test_citations_count_per_workspace(svc: Service) -> None:
    svc.index("acme", [note("a", "alpha"), note("b", "beta")])
    svc.index("rival", [note("a", "alpha")])
    assert lifecycle.note_citations(svc.store, "acme", ["a", "b", "missing"]) == {"a": 1, "b": 1}
    assert lifecycle.note_citations(svc.store, "acme", ["a"]) == {"a": 2}
    assert lifecycle.note_citations(svc.store, "rival", ["b"]) == {}
    assert _read(svc, "acme", "a").citations == 2
    assert _read(svc, "rival", "a").citations is None


def test_recurrences_count_a_key_and_list_the_earliest_not_yet_embedded(svc: Service) -> None:
    # Given four E observations of one content and one of another, in acme, and one in rival
    # (written with recurrence embedding off, so none is embedded)
    plain = Service(svc.store, svc.embedder, svc.settings.model_copy(update={"embed_recurring_after": 0}))
    same = "Deployment failed: console to production."
    plain.index("acme", [note(f"e{n}", f"deploy {n}", same, observation_type="deployment_error",
                              occurred_at=NOW - timedelta(hours=10 - n)) for n in range(4)])  # fmt: skip
    plain.index("acme", [note("x", "other", "Deployment canceled.", observation_type="deployment_error")])
    plain.index("rival", [note("r", "deploy", same, observation_type="deployment_error")])
    key = _read(svc, "acme", "e0").recurrence_key
    assert key is not None and key == _read(svc, "rival", "r").recurrence_key
    # When asked, Then acme's count, the earliest two not embedded, and nothing for unknown keys
    found = lifecycle.recurrences(svc.store, "acme", [key, "no-such-key"], 2)
    assert {k: (r.count, r.unembedded) for k, r in found.items()} == {key: (4, ["e0", "e1"])}
    assert lifecycle.recurrences(svc.store, "rival", [key], 10)[key].count == 1
    assert lifecycle.recurrences(svc.store, "nobody", [key], 10) == {}


def test_archive_execution_marks_every_chunk_of_old_e_observations_of_every_workspace(svc: Service) -> None:
    old = NOW - timedelta(days=40)
    svc.index("acme", [_long("e1", "ci_run", "zanzibar", occurred_at=old), _long("e2", "ci_run", "zanzibar")])
    svc.index("acme", [_long("a1", "decision", "zanzibar", occurred_at=old)])
    svc.index("rival", [_long("e3", "ci_run", "zanzibar", occurred_at=old)])
    # When the archive runs for what occurred 30 days ago or more
    assert lifecycle.archive_execution(svc.store, NOW - timedelta(days=30), NOW) == 2
    # Then no chunk of those is retrieved unless asked; the others are; and they are archived once
    for workspace, left, archived in (("acme", {"e2", "a1"}, {"e1"}), ("rival", set(), {"e3"})):
        hits = svc.store.retrieve(workspace, text="zanzibar", vector=None, model_id=None, flt=Filter(NOW), limit=9)
        assert {h.observation.id for h in hits.lexical} == left
        asked = Filter(NOW, include_archived=True)
        hits = svc.store.retrieve(workspace, text="zanzibar", vector=None, model_id=None, flt=asked, limit=9)
        assert {h.observation.id for h in hits.lexical if h.observation.archived_at == NOW} == archived
    assert lifecycle.archive_execution(svc.store, NOW - timedelta(days=30), NOW) == 0
