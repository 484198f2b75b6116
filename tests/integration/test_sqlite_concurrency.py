"""The embedded store under threads, as ``serve`` runs it: searches in parallel with writes, and
never a ghost — every hit's record is the chunk that was scored, at one generation."""

from __future__ import annotations

import random
import threading
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.domain.filters import Filter
from neural_memory.models import SearchRequest
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.fakes import HashEmbedder
from tests.helpers.mirror_records import EMBEDDER, NOW, WORDS, entry
from tests.helpers.pipeline import note

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def test_searches_racing_writes_only_ever_return_records_that_hold_the_query_word(tmp_path: Path) -> None:
    # Given a store with a few observations, searched by four threads while one thread keeps
    # replacing and deleting them (rowids are reused; a stale mirror would pair a score with
    # another chunk's record)
    store = SqliteStore(tmp_path / "memory.db")
    ids = [f"obs-{i}" for i in range(12)]
    store.write("acme", [entry(obs_id, [WORDS[i % len(WORDS)]], False) for i, obs_id in enumerate(ids)])
    stop = threading.Event()
    failures: list[str] = []
    searches = [0]

    def write() -> None:
        rng = random.Random(1)
        while not stop.is_set():
            batch = [entry(rng.choice(ids), rng.sample(WORDS, rng.randint(1, 4)), False) for _ in range(3)]
            store.write("acme", batch)
            store.delete("acme", rng.choice(ids))

    def search(seed: int) -> None:
        rng = random.Random(seed)
        while not stop.is_set():
            word = rng.choice(WORDS)
            vector = EMBEDDER.embed([word], "search_query")[0]
            try:
                found = store.retrieve(
                    "acme", text=word, vector=vector, model_id=EMBEDDER.model_id, flt=Filter(live_at=NOW), limit=20
                )
            except Exception as exc:  # any failure under concurrency is the finding
                failures.append(repr(exc))
                return
            searches[0] += 1
            failures.extend(
                f"{hit.observation.id} lacks {word!r}" for hit in found.lexical if word not in hit.observation.content
            )

    threads = [threading.Thread(target=write)] + [threading.Thread(target=search, args=(s,)) for s in range(4)]
    # When they run for a while
    for thread in threads:
        thread.start()
    stop.wait(3.0)
    stop.set()
    for thread in threads:
        thread.join(30)
    # Then no search failed or returned a record whose text is not what was scored
    assert searches[0] > 50 and failures == []


def test_a_committed_write_stands_when_the_in_memory_index_fails_to_take_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a store whose in-memory index is loaded, and fails once to apply the next write
    store = SqliteStore(tmp_path / "memory.db")
    service = Service(store, HashEmbedder(), Settings(data_dir=tmp_path), clock=lambda: NOW)
    service.index("acme", [note("first", "alpha runbook")])
    assert _keyword(service, "alpha") == ["first"]
    real = store._sync_mirror
    failures = iter([MemoryError("no room for the new rows")])

    def failing_once(*args: Any) -> None:
        if (failure := next(failures, None)) is not None:
            raise failure
        real(*args)

    monkeypatch.setattr(store, "_sync_mirror", failing_once)
    # When a write commits and its mirror update fails, Then the write is acknowledged (it is
    # stored), and searches find it: the index is rebuilt from the file on next use
    outcome = service.index("acme", [note("second", "alpha rollback")])
    assert outcome.created == ["second"]
    assert sorted(_keyword(service, "alpha")) == ["first", "second"]
    store.close()


def _keyword(service: Service, query: str) -> list[str]:
    body = SearchRequest.model_validate({"query": query, "topK": 10, "mode": "keyword", "llmFilter": False})
    return [r.id for r in service.search("acme", body, "r").results]
