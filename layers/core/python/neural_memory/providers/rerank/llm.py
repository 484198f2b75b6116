"""LLM reranking: the relevance scorer's 0..1 scores order the candidates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.providers.llm.gating import ScoringFailed
from neural_memory.providers.rerank.base import RerankFailed

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Candidate
    from neural_memory.providers.llm.gating import RelevanceScorer


class LlmReranker:
    """Orders candidates by LLM relevance (ties keep their incoming order)."""

    def __init__(self, scorer: RelevanceScorer) -> None:
        self._scorer = scorer

    def rerank(self, query: str, candidates: Sequence[Candidate], top_k: int) -> list[Candidate]:
        try:
            scores = self._scorer.score(query, candidates)
        except ScoringFailed as exc:
            raise RerankFailed(f"LLM rerank failed ({exc.reason})") from exc
        order = sorted(range(len(candidates)), key=lambda i: -scores[candidates[i].observation.id])
        return [
            candidates[i].model_copy(update={"rerank": scores[candidates[i].observation.id]}) for i in order[:top_k]
        ]
