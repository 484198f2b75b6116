"""The embedded store's reindex (issue 24): a store built with model A keeps answering vector
searches with A's vectors while it is rebuilt for model B, and afterwards every observation is
found by B; a write during the reindex gets B's vector; a stopped reindex resumes; the embedding
cache spares the model; a process configured with another model is refused, naming the command.
Real SQLite; the hashing test embedder of two dimensions stands in for the two models."""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import TYPE_CHECKING

import pytest
from neural_memory.domain.chunking import embedding_text
from neural_memory.domain.filters import Filter
from neural_memory.errors import StoreModelMismatch
from neural_memory.models import SearchRequest
from neural_memory.providers.embeddings.cache import EmbeddingCache
from neural_memory.service import Service
from neural_memory.stores.base import read_one
from neural_memory.stores.factory import ensure_store
from neural_memory.stores.sqlite.reindex import ReindexBusy, ReindexReport, SqliteReindexer, _reindex_lock
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.fakes import HashEmbedder
from tests.helpers.pipeline import NOW, note

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from neural_memory.models import ObservationIn, Vector
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration

MODEL_A, MODEL_B = HashEmbedder(64), HashEmbedder(32)
A, B = (MODEL_A.model_id, 64), (MODEL_B.model_id, 32)


def _notes(n: int, prefix: str = "n") -> list[ObservationIn]:
    return [
        note(f"{prefix}{i}", f"{prefix}word{i} note", f"{prefix}word{i} about shard{i % 7} and queue{i % 5}")
        for i in range(n)
    ]


def _service(settings: Settings, embedder: HashEmbedder | None, store: SqliteStore | None = None) -> Service:
    cache = EmbeddingCache(settings.embedding_cache_path)
    return Service(
        store or SqliteStore(settings.sqlite_path), embedder, settings, clock=lambda: NOW, embedding_cache=cache
    )


def _top_by_vector(store: SqliteStore, embedder: HashEmbedder, obs: ObservationIn) -> str | None:
    """The observation's id if it is the best vector hit (cosine 1, maybe tied: hashed words
    collide) for its own embedding text by ``embedder``'s model, else the best hit's id."""
    vector = embedder.embed([embedding_text(obs.title or "", obs.content)], "search_query")[0]
    hits = store.retrieve(
        "acme", text=None, vector=vector, model_id=embedder.model_id, flt=Filter(live_at=NOW), limit=5
    ).vector
    best = [hit.observation.id for hit in hits if hit.score >= 0.999]
    return obs.id if obs.id in best else (hits[0].observation.id if hits else None)


class Counting:
    """``Service.embed_documents`` of model B, counting the texts it asks for, each batch slowed
    by ``delay_s``; stops the run (as Ctrl-C does) after ``stop_after`` batches."""

    def __init__(self, service: Service, delay_s: float = 0.0, stop_after: int | None = None) -> None:
        self.service, self.delay_s, self.stop_after = service, delay_s, stop_after
        self.texts = 0
        self.batches = 0

    def __call__(self, workspace_id: str, texts: Sequence[str]) -> list[Vector]:
        if self.stop_after is not None and self.batches >= self.stop_after:
            raise KeyboardInterrupt
        self.batches += 1
        self.texts += len(texts)
        time.sleep(self.delay_s)
        return self.service.embed_documents(workspace_id, texts)


def test_a_store_built_by_model_a_serves_while_rebuilt_for_model_b_and_every_observation_is_found_after(
    settings: Settings,
) -> None:
    # Given a store built by model A, served (searched and written) by a service configured with A
    served = _service(settings, MODEL_A)
    observations = _notes(120)
    served.index("acme", observations)
    assert served.store.model() == A  # type: ignore[attr-defined]
    store: SqliteStore = served.store  # type: ignore[assignment]
    b = _service(settings, MODEL_B, SqliteStore(settings.sqlite_path))
    embed = Counting(b, delay_s=0.01)
    reindexer = SqliteReindexer(settings.sqlite_path, B, embed, batch_size=8)
    progress: list[tuple[int, int]] = []
    failures: list[BaseException] = []

    def reindex() -> None:
        try:
            reindexer.run(progress=lambda done, total: progress.append((done, total)))
        except BaseException as exc:
            failures.append(exc)

    # When the reindex for B runs (its own connection, as another process's) while A's service
    # searches by vector throughout, and writes an observation half-way
    thread = threading.Thread(target=reindex)
    thread.start()
    searched = 0
    written = note("late", "lateword written during the reindex", "lateword about shard3")
    text = embedding_text(observations[5].title or "", observations[5].content)
    semantic = SearchRequest.model_validate({"query": text, "mode": "semantic", "llmFilter": False})
    while thread.is_alive():
        probe = observations[searched % len(observations)]
        if progress and store.model() == A:
            # Then every search while it runs is answered with A's vectors
            try:
                by_vector = _top_by_vector(store, MODEL_A, probe)
                by_search = [r.id for r in served.search("acme", semantic, "r").results][:1]
            except StoreModelMismatch:
                # The swap landed between the check and the search: refused from then on, as designed
                assert store.model() == B
                continue
            assert (by_vector, by_search) == (probe.id, ["n5"])
            searched += 1
            if searched == 5:
                served.index("acme", [written])
        time.sleep(0.005)
    thread.join()
    assert not failures, failures
    assert searched >= 10  # searches really ran beside it
    assert len(progress) >= 120 // 8 and progress[-1][0] == progress[-1][1]
    # Then the store is B's, and every observation, the one written during the reindex too, is
    # found by B's vectors (first hit for its own text)
    assert store.model() == B
    for obs in [*observations, written]:
        assert _top_by_vector(store, MODEL_B, obs) == obs.id, obs.id
    with sqlite3.connect(settings.sqlite_path) as conn:
        assert conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0] == 0  # emptied by the swap
        assert conn.execute("SELECT DISTINCT model_id FROM chunks WHERE embedding IS NOT NULL").fetchall() == [(B[0],)]
    # And the service still configured with A is refused vector searches and writes, naming the command
    with pytest.raises(StoreModelMismatch, match=r"`neural-memory reindex --data-dir .*`"):
        served.search("acme", semantic, "r")
    with pytest.raises(StoreModelMismatch, match="test-hash-32"):
        served.index("acme", [note("refused", "refused note")])
    # While B's service searches it, semantically and by keyword
    found = b.search("acme", semantic, "r").results
    assert found and found[0].id == "n5"


def test_a_write_during_the_reindex_gets_b_s_vector_even_at_the_swap(settings: Settings) -> None:
    # Given a store built by A, and a reindex for B during which A's service writes twice: once
    # while the first pass embeds (a new observation, and one replaced), once just before the swap
    served = _service(settings, MODEL_A)
    served.index("acme", _notes(10))
    b = _service(settings, MODEL_B, SqliteStore(settings.sqlite_path))
    during = [note("late", "lateword written now"), note("n3", "n3 rewritten", "shard9 words")]
    at_swap = note("last", "lastword written just before the swap")
    calls: list[int] = []

    def embed(workspace_id: str, texts: Sequence[str]) -> list[Vector]:
        calls.append(len(texts))
        if len(calls) == 1:
            served.index("acme", during)
        return b.embed_documents(workspace_id, texts)

    class WritesBeforeTheSwap(SqliteReindexer):
        def _swap(self, conn: sqlite3.Connection, report: ReindexReport) -> bool:
            if read_one(served.store, "acme", "last") is None:
                served.index("acme", [at_swap])
            return super()._swap(conn, report)

    # When it runs to the swap
    report = WritesBeforeTheSwap(settings.sqlite_path, B, embed, batch_size=100).run()
    # Then what was written meanwhile was caught up (the last inside the swap's transaction; the
    # replaced chunk's vector for its old text was never kept), and B's vectors find it all
    assert report.swapped and calls[-1] == 1
    store: SqliteStore = b.store  # type: ignore[assignment]
    for obs in [*during, at_swap]:
        assert _top_by_vector(store, MODEL_B, obs) == obs.id, obs.id


def test_a_stopped_reindex_resumes_without_redoing_finished_batches(settings: Settings) -> None:
    # Given a store built by A of 40 observations
    served = _service(settings, MODEL_A)
    served.index("acme", _notes(40))
    served.store.close()  # type: ignore[attr-defined]
    b = _service(settings, MODEL_B)
    # When a reindex for B is stopped (Ctrl-C) after 3 batches of 8
    first = Counting(b, stop_after=3)
    with pytest.raises(KeyboardInterrupt):
        SqliteReindexer(settings.sqlite_path, B, first, batch_size=8).run()
    # Then the store is still A's, with those batches kept aside
    assert SqliteStore(settings.sqlite_path).model() == A
    with sqlite3.connect(settings.sqlite_path) as conn:
        assert conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0] == 24
    # When it runs again, without the cache (so every text it embeds reaches the model)
    second = Counting(Service(SqliteStore(settings.sqlite_path), MODEL_B, settings, clock=lambda: NOW))
    report = SqliteReindexer(settings.sqlite_path, B, second, batch_size=8).run()
    # Then it embeds only the 56 chunks left (of 80: each note's text and its title's), and swaps
    assert (second.texts, report.resumed, report.embedded, report.swapped) == (56, 24, 56, True)
    assert "24 done by an earlier run" in report.summary()
    assert SqliteStore(settings.sqlite_path).model() == B


def test_a_reindex_back_to_a_model_already_seen_embeds_nothing_through_the_cache(settings: Settings) -> None:
    # Given a store built by A (whose vectors the embedding cache holds) reindexed for B
    served = _service(settings, MODEL_A)
    observations = _notes(20)
    served.index("acme", observations)
    b = _service(settings, MODEL_B, SqliteStore(settings.sqlite_path))
    SqliteReindexer(settings.sqlite_path, B, b.embed_documents).run()
    # When it is reindexed back for A
    model_a = HashEmbedder(64)
    back = _service(settings, model_a, SqliteStore(settings.sqlite_path))
    report = SqliteReindexer(settings.sqlite_path, A, back.embed_documents).run()
    # Then A's model embedded nothing: every vector came from the cache, and A finds them all
    assert report.swapped and model_a.calls == []
    assert all(_top_by_vector(back.store, MODEL_A, obs) == obs.id for obs in observations)  # type: ignore[arg-type]
    # And a run for the store's own model has nothing to do
    assert not SqliteReindexer(settings.sqlite_path, A, back.embed_documents).run().swapped


def test_another_model_is_refused_at_start_naming_the_command_and_keyword_search_serves_any_store(
    settings: Settings,
) -> None:
    # Given a store built by A
    _service(settings, MODEL_A).index("acme", _notes(5))
    folder = settings.data_dir
    # When a process configured with B starts, Then it is refused, naming the command and the folder
    with pytest.raises(StoreModelMismatch) as refused:
        ensure_store(settings, MODEL_B)
    message = str(refused.value)
    assert f"neural-memory reindex --data-dir {folder}" in message and "test-hash-64" in message
    assert "test-hash-32" in message
    # And A, or no embedder at all, starts
    ensure_store(settings, MODEL_A)
    ensure_store(settings, None)
    keyword = _service(settings, None)
    request = SearchRequest.model_validate({"query": "nword3", "mode": "keyword", "llmFilter": False})
    assert [r.id for r in keyword.search("acme", request, "r").results] == ["n3"]
    # And a keyword-only write is taken by a store of any model
    keyword.index("acme", [note("kw", "kwword keyword-only note")])


def test_a_fresh_store_adopts_the_configured_model_and_an_older_one_the_model_its_chunks_carry(
    settings: Settings, tmp_path: Path
) -> None:
    # Given a fresh store, When model B writes to it first, Then it is B's
    fresh = _service(settings, MODEL_B)
    assert fresh.store.model() is None  # type: ignore[attr-defined]
    fresh.index("acme", _notes(3))
    assert fresh.store.model() == B  # type: ignore[attr-defined]
    fresh.store.close()  # type: ignore[attr-defined]
    # Given a store made before stores recorded their model (no meta keys), When it is opened,
    # Then it is read as built by the model its chunks carry
    with sqlite3.connect(settings.sqlite_path) as conn:
        conn.execute("DELETE FROM meta WHERE key IN ('model_id', 'dimension', 'model_recorded')")
    assert SqliteStore(settings.sqlite_path).model() == B


def test_one_reindex_at_a_time(settings: Settings) -> None:
    # Given a reindex holding the folder's lock, When another starts, Then it is refused
    _service(settings, MODEL_A).index("acme", _notes(2))
    with _reindex_lock(settings.sqlite_path), pytest.raises(ReindexBusy, match="another"):
        SqliteReindexer(settings.sqlite_path, B, _service(settings, MODEL_B).embed_documents).run()
