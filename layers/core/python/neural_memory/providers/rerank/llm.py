"""LLM reranking with the gate's blend: ``rerank = 0.6 llm + 0.4 vector`` (the fused score for a
candidate without a vector score), ``llm`` set on each candidate so that the pipeline can apply
the gate's 0.4 floor to it. Candidates the gate already scored in this search are not sent again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.providers.llm.gating import NEUTRAL_SCORE, ScoringFailed, blended
from neural_memory.providers.rerank.base import RerankFailed

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Candidate
    from neural_memory.providers.llm.gating import RelevanceScorer


class LlmReranker:
    """Orders candidates by the blend (ties keep their incoming order); a candidate the LLM's reply
    left out is scored neutral (``NEUTRAL_SCORE``), as the gate does."""

    def __init__(self, scorer: RelevanceScorer) -> None:
        self._scorer = scorer

    def rerank(self, query: str, candidates: Sequence[Candidate], top_k: int) -> list[Candidate]:
        todo = [c for c in candidates if c.llm is None]
        scores: dict[str, float] = {}
        if todo:
            try:
                scores = self._scorer.score(query, todo)
            except ScoringFailed as exc:
                raise RerankFailed(f"LLM rerank failed ({exc.reason})") from exc
        rescored = []
        for candidate in candidates:
            llm = candidate.llm if candidate.llm is not None else scores.get(candidate.observation.id, NEUTRAL_SCORE)
            rescored.append(candidate.model_copy(update={"llm": llm, "rerank": blended(llm, candidate)}))
        order = sorted(range(len(rescored)), key=lambda i: -(rescored[i].rerank or 0.0))
        return [rescored[i] for i in order[:top_k]]
