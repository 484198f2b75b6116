"""Embedding what is written: how content is cut (``chunking``), the vectors of the embedded
chunks, and document vectors from the workspace's cache or the embedder (the chunks of an ingest,
a scrub, a turn cut again, and the embedded store's reindex)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from neural_memory.domain.chunking import embedding_text
from neural_memory.domain.ids import embedding_hash, text_key
from neural_memory.domain.tiers import embeds
from neural_memory.errors import ConfigurationError
from neural_memory.observability import METRIC_EMBEDDING_CACHE_HITS, record_count
from neural_memory.providers.embeddings.fair_share import for_workspace

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from neural_memory.domain.chunking import Chunking
    from neural_memory.models import Vector
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.providers.embeddings.fair_share import Priority
    from neural_memory.providers.embeddings.vector_cache import VectorCache
    from neural_memory.settings import Settings
    from neural_memory.stores.base import IndexedObservation


@dataclass
class Embedding:
    """The embedder (None: lexical only) and the workspace's vector cache of one service.

    Both are attributes a caller may replace after construction (an evaluation points the cache at
    a shared folder; a benchmark wraps the embedder to time it), as it could on ``Service``."""

    embedder: Embedder | None
    cache: VectorCache | None
    settings: Settings
    clock: Callable[[], datetime]

    @property
    def chunking(self) -> Chunking:
        """How content is cut: passages for the embedder and windows for BM25, or only windows,
        each searched both ways, when there is no embedder (a passage would be searched by nothing)."""
        chunking = self.settings.chunking
        if self.embedder is None:
            return replace(chunking, passage_tokens=chunking.tokens, title_passages=False)
        return chunking

    def embed_chunks(
        self,
        workspace_id: str,
        items: Sequence[IndexedObservation],
        cache: VectorCache | None = None,
        priority: Priority = "bulk",
    ) -> None:
        """Vectors for the embedded chunks (``Chunk.embedded``) of the embedded tiers: from the
        workspace's cache (``cache``, else the service's) when the same text was embedded before
        by the same model, else in one batch call to the embedder, as work of class ``priority``
        (``fair_share``). Each chunk keeps the ``embedding_hash`` of its text, by which the
        OpenSearch store finds its vector again (a rewrite, a replay, a reindex)."""
        if self.embedder is None:
            return
        model_id = self.embedder.model_id
        now = self.clock()
        targets = [
            (item, chunk) for item in items if embeds(item.record, now) for chunk in item.chunks if chunk.embedded
        ]
        texts = [embedding_text(item.record.title, chunk.text) for item, chunk in targets]
        vectors = self.embed_documents(workspace_id, texts, cache, priority)
        for (item, chunk), text, vector in zip(targets, texts, vectors, strict=True):
            chunk.vector = vector
            chunk.embedding_hash = embedding_hash(model_id, text)
            item.model_id = model_id

    def embed_documents(
        self, workspace_id: str, texts: Sequence[str], cache: VectorCache | None = None, priority: Priority = "bulk"
    ) -> list[Vector]:
        """One document vector per text (``embedding_text``s), from the workspace's cache when the
        same text was embedded before by the same model, else in one batch call to the embedder
        (the chunks of an ingest, and the embedded store's reindex)."""
        if self.embedder is None:
            raise ConfigurationError("no embedder is configured (NM_EMBEDDER=none)")
        model_id = self.embedder.model_id
        cache = cache or self.cache
        cached = cache.get_many(model_id, workspace_id, texts) if cache else {}
        # A damaged cache entry is re-embedded, never stored as a vector of the wrong shape.
        cached = {key: vector for key, vector in cached.items() if len(vector) == self.embedder.dimension}
        missing = list(dict.fromkeys(t for t in texts if text_key(t) not in cached))
        if missing:
            with for_workspace(workspace_id, priority):  # this workspace's, of its class (fair_share)
                fresh = self.embedder.embed(missing, "search_document")
            if cache:
                cache.put_many(model_id, workspace_id, list(zip(missing, fresh, strict=True)))
            cached.update((text_key(t), v) for t, v in zip(missing, fresh, strict=True))
        record_count(METRIC_EMBEDDING_CACHE_HITS, len(texts) - len(missing))
        return [cached[text_key(text)] for text in texts]
