"""Cohere rerank (default ``rerank-v3.5``) through the official SDK, imported on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.providers.rerank.base import RerankFailed
from neural_memory.providers.sdk_clients import ApiKey, lazy_cohere

if TYPE_CHECKING:
    from collections.abc import Sequence

    import httpx

    from neural_memory.models import Candidate

MAX_DOCUMENT_CHARS = 4000


class CohereReranker:
    """Cross-encoder relevance from Cohere; scores are already in [0, 1]."""

    def __init__(
        self,
        api_key: ApiKey,
        model: str = "rerank-v3.5",
        timeout_s: float = 3.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._model = model
        self._client = lazy_cohere(api_key, timeout_s, http_client)

    def rerank(self, query: str, candidates: Sequence[Candidate], top_k: int) -> list[Candidate]:
        """One rerank call over every candidate's title and text."""
        if not candidates:
            return []
        documents = [f"{c.observation.title}\n{c.observation.content}"[:MAX_DOCUMENT_CHARS] for c in candidates]
        try:
            # No retries (the SDK's default is two, with backoff): a search has a fallback that is
            # faster than a retry, and a retry would call the provider twice in one search.
            response = self._client.get().rerank(
                model=self._model,
                query=query,
                documents=documents,
                top_n=min(top_k, len(documents)),
                request_options={"max_retries": 0},
            )
            ranked = [(int(r.index), float(r.relevance_score)) for r in response.results]
        except Exception as exc:  # the SDK raises many types (ApiError, httpx errors, pydantic)
            raise RerankFailed(f"Cohere rerank failed: {type(exc).__name__}") from exc
        if any(not 0 <= index < len(candidates) for index, _ in ranked):
            raise RerankFailed("Cohere rerank returned an index out of range")
        return [candidates[index].model_copy(update={"rerank": min(1.0, max(0.0, score))}) for index, score in ranked]
