"""The one factory of providers: the store, embedder, vector cache, LLM roles and reranker that
settings name, for ``service.build_service`` to wire into a ``Service``. Nothing loads until
first use: each is imported here only when settings choose it, and its SDK on its first call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neural_memory.answer.answering import LlmAnswerer
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.providers.embeddings.vector_cache import VectorCache
    from neural_memory.providers.llm.gating import RelevanceScorer
    from neural_memory.providers.rerank.base import Reranker
    from neural_memory.search.filters.inference import FilterProposer
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store

ANSWER_TIMEOUT_S = 10.0  # an answer writes prose: longer than a score or a filter
AUTO_FILTERS_TIMEOUT_S = 3.0  # autoFilters' call, unless NM_GATE_TIMEOUT_S is set (no budget in the design)


@dataclass(frozen=True)
class Providers:
    """What a ``Service`` is built with, as settings chose it (None: not configured)."""

    store: Store
    embedder: Embedder | None
    cache: VectorCache | None
    scorer: RelevanceScorer | None
    reranker: Reranker | None
    answerer: LlmAnswerer | None
    proposer: FilterProposer | None


def chosen_providers(settings: Settings) -> Providers:
    """The store and providers that ``settings`` name."""
    from neural_memory.providers.embeddings import build_embedder
    from neural_memory.stores.factory import build_store

    store = build_store(settings)
    cache: VectorCache | None = None
    if settings.store == "sqlite":
        from neural_memory.providers.embeddings.cache import EmbeddingCache

        cache = EmbeddingCache(settings.embedding_cache_path)
    elif settings.store == "opensearch":  # the index is the cache: its chunks keep their text's hash
        from neural_memory.stores.opensearch.store import OpenSearchStore
        from neural_memory.stores.opensearch.stored_vectors import StoredVectors

        if isinstance(store, OpenSearchStore):
            cache = StoredVectors(store)
    # Keys are read (from Secrets Manager in AWS) when a provider is first used, so a function
    # reads only the secrets it needs, and an unreadable one degrades that provider with a reason.
    scorer = answerer = proposer = None
    if settings.llm_providers():
        from neural_memory.answer.answering import LlmAnswerer  # the SDKs themselves load on first call
        from neural_memory.providers.llm.factory import build_llm
        from neural_memory.providers.llm.gating import LlmScorer
        from neural_memory.search.filters.inference import LlmFilterProposer

        # The gate (and the LLM rerank) waits its budget-derived timeout; autoFilters' call comes
        # before retrieval and has no budget in the design: 3 s unless NM_GATE_TIMEOUT_S is set.
        gate = build_llm(settings, settings.gate_timeout)
        filters = build_llm(settings, settings.gate_timeout_s or AUTO_FILTERS_TIMEOUT_S)
        slow = build_llm(settings, ANSWER_TIMEOUT_S)
        if gate is not None and filters is not None and slow is not None:
            scorer = LlmScorer(gate, temperature=settings.gate_temperature)
            answerer, proposer = LlmAnswerer(slow), LlmFilterProposer(filters)
    reranker = None
    if settings.cohere_configured:
        from neural_memory.providers.rerank.cohere import CohereReranker

        reranker = CohereReranker(settings.cohere_key, model=settings.rerank_model, timeout_s=settings.rerank_timeout_s)
    return Providers(store, build_embedder(settings), cache, scorer, reranker, answerer, proposer)
