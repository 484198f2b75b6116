"""The embedding cache of the OpenSearch store, on osmem-server: every embedded chunk keeps the hash
of its text and model, so a rewrite of unchanged content, a replay and a reindex into a new index
for the same model send nothing to the embedder, and changed content sends only its changed
chunks. The embedder is the hashing test double, which records every text it is asked for."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.domain.chunking import embedding_text
from neural_memory.domain.ids import embedding_hash
from neural_memory.ingest.prepare import prepare
from neural_memory.observability import METRIC_EMBEDDING_CACHE_HITS, metrics
from neural_memory.service import Service
from neural_memory.stores.opensearch.index import OpenSearchAdmin
from neural_memory.stores.opensearch.mapping import SCHEMA_VERSION, index_body
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.opensearch.stored_vectors import StoredVectors
from neural_memory.use_cases.reindexing import Reindexer
from opensearchpy import OpenSearch

from tests.helpers.fakes import HashEmbedder
from tests.helpers.pipeline import NOW, note

if TYPE_CHECKING:
    from neural_memory.models import ObservationIn
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration
ALIAS = "nm-cache"
# Long enough for several 128-token passages (and 200-token windows after them)
LONG = " ".join(f"Step {i} of the runbook restarts worker {i} and checks its queue depth." for i in range(45))


class RecordingEmbedder(HashEmbedder):
    """The hashing test embedder, counting the document texts it was asked to embed."""

    def documents(self) -> list[str]:
        return [text for texts, kind in self.calls if kind == "search_document" for text in texts]


def _service(client: OpenSearch, embedder: HashEmbedder, settings: Settings, alias: str = ALIAS) -> Service:
    store = OpenSearchStore(client, alias, refresh="true", single_index=True)
    return Service(store, embedder, settings, clock=lambda: NOW, embedding_cache=StoredVectors(store))


def _embedded_texts(service: Service, observation: ObservationIn) -> list[str]:
    """What the embedder sees for an observation: title + each embedded chunk."""
    item = prepare(observation, now=NOW, policy=service.settings.tier_policy, ttl_days=30, chunking=service.chunking)
    return [embedding_text(item.record.title, c.text) for c in item.chunks if c.embedded]


def _chunks(client: OpenSearch, index: str, observation_id: str) -> dict[int, dict[str, Any]]:
    body = {"query": {"term": {"observation_id": observation_id}}, "size": 500}
    hits = client.search(index=index, body=body)["hits"]["hits"]
    return {h["_source"]["chunk_no"]: h["_source"] for h in hits}


def _hits() -> float:
    values = metrics.metric_set.get(METRIC_EMBEDDING_CACHE_HITS, {}).get("Value", [])
    return float(sum(values) if isinstance(values, list) else values)


@pytest.fixture
def client(osmem_url: str) -> OpenSearch:
    return OpenSearch(hosts=[osmem_url])


@pytest.fixture
def recording() -> RecordingEmbedder:
    return RecordingEmbedder()


@pytest.fixture
def cached(client: OpenSearch, recording: RecordingEmbedder, settings: Settings) -> Service:
    """A service over a fresh index whose embedding cache is the index (as ``build_service`` makes it)."""
    assert OpenSearchAdmin(client, ALIAS, replicas=0).ensure_index(64, recording.model_id) == "created"
    return _service(client, recording, settings)


def test_a_rewrite_and_a_replay_of_unchanged_content_embed_nothing(
    cached: Service, recording: RecordingEmbedder, client: OpenSearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cache-hit metric is counted below: on, whatever the session's environment says
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    monkeypatch.delenv("POWERTOOLS_DEV", raising=False)
    # Given a long note (several passages) and a short one, ingested once
    notes = [note("runbook", "worker runbook", LONG), note("short", "deploy note", "the deploy went fine")]
    cached.index("acme", notes)
    first = recording.documents()
    assert sorted(first) == sorted(_embedded_texts(cached, notes[0]) + _embedded_texts(cached, notes[1]))
    assert len(_embedded_texts(cached, notes[0])) >= 3
    stored = _chunks(client, ALIAS, "runbook")
    # Then every embedded chunk carries the hash of its text and model, beside its vector
    for text, chunk in zip(
        _embedded_texts(cached, notes[0]), sorted(stored.values(), key=lambda c: c["chunk_no"]), strict=False
    ):
        assert chunk["embedding_hash"] == embedding_hash(recording.model_id, text)
    metrics.clear_metrics()
    # When the same observations are written again (a client's rewrite), and again (a replayed event)
    cached.index("acme", notes)
    cached.index("acme", list(reversed(notes)))
    # Then the embedder was asked for nothing more, the cache-hit metric counts every chunk, and
    # the stored vectors are the ones first made
    assert recording.documents() == first
    assert _hits() == 2 * len(first)
    assert {n: c.get("embedding") for n, c in _chunks(client, ALIAS, "runbook").items()} == {
        n: c.get("embedding") for n, c in stored.items()
    }


def test_changed_content_embeds_only_its_changed_chunks(cached: Service, recording: RecordingEmbedder) -> None:
    # Given the long note ingested
    before = note("runbook", "worker runbook", LONG)
    cached.index("acme", [before])
    calls = len(recording.documents())
    # When its last sentence changes (the same number of words: earlier passages keep their text)
    after = note("runbook", "worker runbook", LONG.replace("worker 44 and", "worker 99 and"))
    cached.index("acme", [after])
    # Then only the passages whose text changed were embedded
    changed = [t for t in _embedded_texts(cached, after) if t not in _embedded_texts(cached, before)]
    assert 0 < len(changed) < len(_embedded_texts(cached, after))
    assert recording.documents()[calls:] == changed
    # And a changed title changes every passage's text: all are embedded again
    retitled = note("runbook", "worker runbook, revised", LONG)
    cached.index("acme", [retitled])
    assert recording.documents()[calls + len(changed) :] == _embedded_texts(cached, retitled)


def test_the_cache_is_per_workspace_and_per_model(
    cached: Service, recording: RecordingEmbedder, client: OpenSearch, settings: Settings
) -> None:
    # Given a note embedded in acme
    cached.index("acme", [note("n1", "deploy note", "the deploy went fine")])
    calls = len(recording.documents())
    # When another workspace stores the very same text, Then it is embedded for that workspace:
    # how fast an ingest returns never tells whether another workspace holds the text
    cached.index("globex", [note("n1", "deploy note", "the deploy went fine")])
    assert len(recording.documents()) == calls + 2  # its passage and its title's

    # When a model of another id (same dimension) writes it, Then it is embedded by that model
    class OtherModel(RecordingEmbedder):
        @property
        def model_id(self) -> str:
            return "test-other-64"

    other = OtherModel()
    _service(client, other, settings).index("acme", [note("n1", "deploy note", "the deploy went fine")])
    assert len(other.documents()) == 2


def _claim_older_schema(client: OpenSearch, index: str) -> None:
    """Make the live index say it was built for the schema before this one, as the next change that
    cannot be made in place (a field's type, the analyzer) will make every live index look: the
    bootstrap then reindexes for the same model."""
    meta = client.indices.get_mapping(index=index)[index]["mappings"]["_meta"]
    client.indices.put_mapping(index=index, body={"_meta": {**meta, "schema_version": SCHEMA_VERSION - 1}})


def test_a_reindex_for_the_same_model_copies_the_stored_vectors_without_embedding(
    cached: Service, recording: RecordingEmbedder, client: OpenSearch
) -> None:
    # Given notes in two workspaces, and a live index that a mapping change leaves behind
    cached.index("acme", [note("runbook", "worker runbook", LONG), note("short", "deploy note", "went fine")])
    cached.index("globex", [note("g1", "globex note", "globex deploys on mondays")])
    source = f"{ALIAS}-000001"
    vectors = {n: c["embedding"] for n, c in _chunks(client, source, "runbook").items() if "embedding" in c}
    _claim_older_schema(client, source)
    admin = OpenSearchAdmin(client, ALIAS, replicas=0)
    assert admin.needs_reindex(64, recording.model_id)
    calls = len(recording.documents())
    # When the reindex runs
    report = Reindexer(cached, admin, clock=lambda: NOW + timedelta(minutes=2)).run()
    # Then the alias moved to a new index holding every observation with its vectors and their
    # hashes, and not one text went to the embedder
    assert report.swapped and report.copied == 3 and admin.live() == f"{ALIAS}-000002", report.summary()
    assert recording.documents()[calls:] == []
    copied = _chunks(client, f"{ALIAS}-000002", "runbook")
    assert {n: c["embedding"] for n, c in copied.items() if "embedding" in c} == vectors
    assert all("embedding_hash" in c for c in copied.values() if "embedding" in c)


def _index_before_the_hash(client: OpenSearch, name: str, model_id: str) -> None:
    """An index as ``ensure_index`` created it before chunks kept their hash: the same schema
    version, no ``embedding_hash`` in its strict mapping."""
    body = index_body(64, model_id, replicas=0)
    del body["mappings"]["properties"]["embedding_hash"]
    client.indices.create(index=name, body=body)
    client.indices.update_aliases(body={"actions": [{"add": {"index": name, "alias": ALIAS}}]})


def test_an_index_created_before_the_hash_takes_writes_and_gets_the_field_at_the_next_bootstrap(
    client: OpenSearch, recording: RecordingEmbedder, settings: Settings
) -> None:
    # Given a live index without the field, and the service writing hashes
    _index_before_the_hash(client, f"{ALIAS}-000001", recording.model_id)
    service = _service(client, recording, settings)
    notes = [note("runbook", "worker runbook", LONG)]
    # When it writes, Then its writes are stored all the same (without the hash the index refuses)
    outcome = service.index("acme", notes)
    assert outcome.created == ["runbook"] and not outcome.failed
    assert all("embedding_hash" not in c for c in _chunks(client, ALIAS, "runbook").values())
    # When the bootstrap checks the index, Then it adds the field in place: no reindex
    admin = OpenSearchAdmin(client, ALIAS, replicas=0)
    assert not admin.needs_reindex(64, recording.model_id)
    assert admin.ensure_index(64, recording.model_id) == "ok, added embedding_hash"
    assert admin.ensure_index(64, recording.model_id) == "ok"
    # And the next write embeds once more (nothing stored says what the old vectors were made of)
    # and stores the hashes; the one after embeds nothing
    calls = len(recording.documents())
    service.index("acme", notes)
    assert len(recording.documents()) == calls + len(_embedded_texts(service, notes[0]))
    assert all("embedding_hash" in c for c in _chunks(client, ALIAS, "runbook").values() if "embedding" in c)
    service.index("acme", notes)
    assert len(recording.documents()) == calls + len(_embedded_texts(service, notes[0]))


def test_an_index_without_hashes_reindexes_correctly_embedding_what_it_cannot_copy(
    client: OpenSearch, recording: RecordingEmbedder, settings: Settings
) -> None:
    # Given an index of an older schema whose chunks carry no hash (written before the field)
    _index_before_the_hash(client, f"{ALIAS}-000001", recording.model_id)
    service = _service(client, recording, settings)
    notes = [note("runbook", "worker runbook", LONG), note("short", "deploy note", "went fine")]
    service.index("acme", notes)
    _claim_older_schema(client, f"{ALIAS}-000001")
    calls = len(recording.documents())
    # When it is reindexed for the same model
    admin = OpenSearchAdmin(client, ALIAS, replicas=0)
    report = Reindexer(service, admin, clock=lambda: NOW + timedelta(minutes=2)).run()
    # Then every text was embedded once (nothing said what the old vectors were made of), the new
    # index holds them with their hashes, and a rewrite after the swap embeds nothing
    assert report.swapped and report.copied == 2, report.summary()
    expected = _embedded_texts(service, notes[0]) + _embedded_texts(service, notes[1])
    assert sorted(recording.documents()[calls:]) == sorted(expected)
    assert all("embedding_hash" in c for c in _chunks(client, ALIAS, "runbook").values() if "embedding" in c)
    service.index("acme", notes)
    assert len(recording.documents()) == calls + len(expected)
