"""Records for the embedded store's mirror tests: a few words make an observation of several
chunks (passages and lexical windows past two), embedded by the hashing test embedder."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from neural_memory.models import Chunk, ObservationRecord
from neural_memory.stores.base import IndexedObservation

from tests.helpers.fakes import HashEmbedder

NOW = datetime(2025, 12, 14, tzinfo=UTC)
EMBEDDER = HashEmbedder(16)
WORDS = ["deploy", "failed", "console", "billing", "lock", "session", "redirect", "cache", "queue", "worker"]


def entry(obs_id: str, words: list[str], expired: bool) -> IndexedObservation:
    text = " ".join(words)
    record = ObservationRecord(
        id=obs_id,
        source="manual",
        source_type="note",
        observation_type="note",
        actor_name=None,
        occurred_at=NOW - timedelta(days=30 if expired else 1),
        ingested_at=NOW,
        expires_at=NOW - timedelta(days=1) if expired else None,
        tier="C" if expired else "A",
        title=words[0],
        content=text,
        url=None,
        session_id=None,
        parent_id=None,
        metadata={},
        content_hash=text,
    )
    # Several chunks per observation, so replacing one changes how many rowids it holds; past
    # two, cut as long content is: passages (vector only) then lexical windows (BM25 only), so
    # passages must count in no BM25 statistic and lexical windows in no vector search.
    pieces = [" ".join(words[i : i + 2]) for i in range(0, len(words), 2)]
    chunks = [Chunk(chunk_no=n, text=p, vector=EMBEDDER.embed([p], "search_document")[0]) for n, p in enumerate(pieces)]
    if len(pieces) > 2:
        windows = [" ".join(words[:3]), " ".join(words[2:])]
        chunks = [c.model_copy(update={"role": "passage"}) for c in chunks]
        chunks += [Chunk(chunk_no=len(pieces) + n, text=w, role="lexical") for n, w in enumerate(windows)]
    return IndexedObservation(record=record, chunks=chunks, model_id=EMBEDDER.model_id)
