"""``Service`` as a facade over the use cases (``use_cases/``): what a caller replaces on it reaches
the use cases that read it, and a use case runs wired by hand, without the facade, over a real
SQLite store."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from neural_memory.domain.ids import text_key
from neural_memory.providers.embeddings.cache import EmbeddingCache
from neural_memory.stores.base import read_one
from neural_memory.stores.sqlite.store import SqliteStore
from neural_memory.use_cases.chat_turns import ChatTurns
from neural_memory.use_cases.embedding import Embedding
from neural_memory.use_cases.upkeep import Upkeep
from neural_memory.use_cases.writing import Writing

from tests.helpers.fakes import HashEmbedder
from tests.helpers.pipeline import NOW, note, service

if TYPE_CHECKING:
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration


def test_an_embedder_and_a_cache_set_on_the_service_serve_its_later_writes(settings: Settings) -> None:
    # Given a service, then another embedder and a cache of its own set on it (as an evaluation
    # points the cache at a shared folder, and a benchmark wraps the embedder to time it)
    svc = service(settings)
    built_with = svc.embedder
    assert isinstance(built_with, HashEmbedder)
    timed = HashEmbedder()
    cache = EmbeddingCache(settings.data_dir / "shared-cache.sqlite3")
    svc.embedder, svc.embedding_cache = timed, cache
    calls_before = len(built_with.calls)
    # When an observation is written and a text embedded
    svc.index("acme", [note("n1", "deploy decision", "We deploy with blue-green.")])
    [vector] = svc.embed_documents("acme", ["a text"])
    # Then the replacements did the work: the new embedder embedded, the new cache holds the vector
    assert timed.calls and all(kind == "search_document" for _, kind in timed.calls)
    assert len(built_with.calls) == calls_before
    stored = cache.get_many(timed.model_id, "acme", ["a text"])
    assert list(stored) == [text_key("a text")]
    assert list(stored[text_key("a text")]) == pytest.approx(list(vector), abs=1e-6)  # kept as float32
    assert svc.embedder is timed and svc.embedding_cache is cache
    svc.close()


def test_writing_and_upkeep_run_wired_by_hand_without_the_facade(settings: Settings) -> None:
    # Given the writing and upkeep use cases built from their stated needs alone
    settings = settings.model_copy(update={"archive_execution_after_days": 30})
    store = SqliteStore(settings.sqlite_path)
    embedding = Embedding(HashEmbedder(), None, settings, lambda: NOW)
    turns = ChatTurns(store, settings, lambda: NOW, embedding)
    writing = Writing(store, embedding, turns, settings, lambda: NOW)
    upkeep = Upkeep(store, embedding, turns, settings)
    old = NOW - timedelta(days=40)
    # When a push of 40 days ago and a fresh one are written, and the maintenance runs
    outcome = writing.index(
        "acme",
        [
            note("old-push", "pushed deploy script", "Pushed.", observation_type="push", occurred_at=old),
            note("new-push", "pushed deploy script", "Pushed again.", observation_type="push"),
        ],
    )
    done = upkeep.maintain(NOW)
    # Then both were created, and only the old one is archived
    assert sorted(outcome.created) == ["new-push", "old-push"]
    assert done == {"purged": 0, "archived": 1, "unembedded": 0}
    archived = {i: (r.archived_at is not None) for i in ("old-push", "new-push") if (r := read_one(store, "acme", i))}
    assert archived == {"old-push": True, "new-push": False}
    store.close()
