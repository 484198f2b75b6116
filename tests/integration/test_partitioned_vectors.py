"""Large embedded stores keep their vectors compressed in partitions (faiss IVF-SQ8): the hits a
search returns carry exact cosines, recall against brute force stays high with and without a
filter, and the partitions survive a restart and take new writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np
import pytest
from neural_memory.domain.filters import Filter
from neural_memory.models import Chunk, ObservationRecord
from neural_memory.stores.base import IndexedObservation
from neural_memory.stores.sqlite import store as sqlite_store
from neural_memory.stores.sqlite import store_writes as sqlite_store_writes
from neural_memory.stores.sqlite.store import SqliteStore

if TYPE_CHECKING:
    from pathlib import Path

    from numpy.typing import NDArray

pytestmark = pytest.mark.integration

NOW = datetime(2025, 12, 14, tzinfo=UTC)
MODEL = "test-model"
DIMENSION = 32
COUNT = 3000


def _partition_from(monkeypatch: pytest.MonkeyPatch, threshold: int) -> None:
    # The store's reads and its writes each partition the mirror past the threshold.
    for module in (sqlite_store, sqlite_store_writes):
        monkeypatch.setattr(module, "PARTITION_FROM", threshold)


def _observation(i: int, vector: NDArray[np.float32]) -> IndexedObservation:
    record = ObservationRecord(
        id=f"obs-{i}",
        source="github" if i % 3 else "vercel",
        source_type="push",
        observation_type="push",
        actor_name=f"dev{i % 7}",
        occurred_at=NOW - timedelta(hours=i % 100),
        ingested_at=NOW,
        expires_at=None,
        tier="A",
        title=f"change {i}",
        content=f"change number {i}",
        url=None,
        session_id=None,
        parent_id=None,
        metadata={},
        content_hash=str(i),
    )
    chunk = Chunk(chunk_no=0, text=record.content, vector=vector.tolist())
    return IndexedObservation(record=record, chunks=[chunk], model_id=MODEL)


def _vectors(count: int, seed: int) -> NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIMENSION))
    vectors = centres[rng.integers(0, 40, count)] + rng.normal(0, 0.5, (count, DIMENSION))
    unit: NDArray[np.float32] = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return unit


def test_partitioned_search_has_exact_scores_high_recall_and_survives_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a store past the partitioning threshold (lowered for the test)
    _partition_from(monkeypatch, 1000)
    vectors = _vectors(COUNT, seed=1)
    store = SqliteStore(tmp_path / "memory.db")
    store.write("acme", [_observation(i, v) for i, v in enumerate(vectors)])
    queries = _vectors(30, seed=2)
    github = Filter(live_at=NOW, sources=("github",))

    def exact(query: NDArray[np.float32], keep: NDArray[np.bool_]) -> list[int]:
        scores = np.where(keep, vectors @ query, -np.inf)
        return [int(i) for i in np.argsort(-scores)[:10]]

    def found(s: SqliteStore, query: NDArray[np.float32], flt: Filter) -> list[tuple[int, float]]:
        hits = s.retrieve("acme", text=None, vector=query.tolist(), model_id=MODEL, flt=flt, limit=10).vector
        return [(int(h.observation.id.split("-")[1]), h.score) for h in hits]

    recalls = []
    everyone = np.ones(COUNT, dtype=bool)
    in_github = np.array([i % 3 != 0 for i in range(COUNT)])
    for query in queries:
        for flt, keep in ((Filter(live_at=NOW), everyone), (github, in_github)):
            hits = found(store, query, flt)
            # When searched, Then every hit's score is its exact cosine, and the filter holds
            assert all(abs(score - max(0.0, float(vectors[i] @ query))) < 1e-5 for i, score in hits)
            assert all(keep[i] for i, _ in hits)
            recalls.append(len({i for i, _ in hits} & set(exact(query, keep))) / 10)
    mirror = store._mirror
    assert mirror is not None and mirror.partitioned is not None and len(mirror.partitioned) == COUNT
    assert float(np.mean(recalls)) >= 0.95

    # When the store restarts, Then it loads the partitions saved beside it and answers the same
    before = [found(store, q, github) for q in queries[:5]]
    store.close()
    restarted = SqliteStore(tmp_path / "memory.db")
    assert [found(restarted, q, github) for q in queries[:5]] == before
    restarted_mirror = restarted._mirror
    assert restarted_mirror is not None and restarted_mirror.partitioned is not None
    # and a new observation is found at once, a replaced one no longer under its old vector
    target = queries[0]
    restarted.write("acme", [_observation(COUNT, target), _observation(0, -target)])
    top = found(restarted, target, Filter(live_at=NOW))
    assert top[0][0] == COUNT and top[0][1] == pytest.approx(1.0, abs=1e-5)
    assert 0 not in {i for i, _ in top}


def test_a_damaged_partitions_file_is_rebuilt_never_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a partitioned store whose saved partitions file was damaged while it was stopped
    _partition_from(monkeypatch, 1000)
    vectors = _vectors(1500, seed=3)
    store = SqliteStore(tmp_path / "memory.db")
    store.write("acme", [_observation(i, v) for i, v in enumerate(vectors)])
    flt = Filter(live_at=NOW)
    before = store.retrieve("acme", text=None, vector=vectors[5].tolist(), model_id=MODEL, flt=flt, limit=5).vector
    store.close()
    (saved,) = tmp_path.glob("*.faiss")
    saved.write_bytes(saved.read_bytes()[:1000])
    # When the store restarts and searches, Then it rebuilds the partitions and answers as before
    restarted = SqliteStore(tmp_path / "memory.db")
    after = restarted.retrieve("acme", text=None, vector=vectors[5].tolist(), model_id=MODEL, flt=flt, limit=5).vector
    assert [h.observation.id for h in after] == [h.observation.id for h in before] and after[
        0
    ].observation.id == "obs-5"
    assert len(list(tmp_path.glob("*.faiss"))) == 1  # the rebuilt snapshot's partitions only


def test_a_store_that_grows_past_the_threshold_moves_its_vectors_into_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a store searched while small (its mirror holds float32 vectors)
    _partition_from(monkeypatch, 1000)
    vectors = _vectors(1600, seed=4)
    store = SqliteStore(tmp_path / "memory.db")
    store.write("acme", [_observation(i, v) for i, v in enumerate(vectors[:800])])
    flt = Filter(live_at=NOW)
    store.retrieve("acme", text=None, vector=vectors[0].tolist(), model_id=MODEL, flt=flt, limit=5)
    assert store._mirror is not None and store._mirror.partitioned is None
    # When it grows past the threshold
    store.write("acme", [_observation(i, v) for i, v in enumerate(vectors[800:], start=800)])
    # Then its vectors are partitioned and old and new observations are found with exact scores
    mirror = store._mirror
    assert mirror is not None and mirror.partitioned is not None and len(mirror.partitioned) == 1600
    for i in (3, 1203):
        hits = store.retrieve("acme", text=None, vector=vectors[i].tolist(), model_id=MODEL, flt=flt, limit=5).vector
        assert hits[0].observation.id == f"obs-{i}" and hits[0].score == pytest.approx(1.0, abs=1e-5)
