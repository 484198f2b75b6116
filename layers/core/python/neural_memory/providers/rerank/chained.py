"""``thorough`` reranking: one reranker narrows the list, a second one decides."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Candidate
    from neural_memory.providers.rerank.base import Reranker


class ChainedReranker:
    """Runs ``first`` to keep twice ``top_k``, then ``second`` to pick ``top_k``."""

    def __init__(self, first: Reranker, second: Reranker) -> None:
        self._first = first
        self._second = second

    def rerank(self, query: str, candidates: Sequence[Candidate], top_k: int) -> list[Candidate]:
        return self._second.rerank(query, self._first.rerank(query, candidates, top_k * 2), top_k)
