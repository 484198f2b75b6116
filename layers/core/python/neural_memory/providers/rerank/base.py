"""The reranker protocol."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Candidate


class RerankFailed(Exception):
    """The reranker could not answer; the pipeline degrades to the next cheaper mode."""


class Reranker(Protocol):
    """Reorders candidates for a query, setting ``rerank`` (a score in [0, 1]) on each it returns.

    Never mutates its inputs: it returns new ``Candidate`` objects.
    """

    def rerank(self, query: str, candidates: Sequence[Candidate], top_k: int) -> list[Candidate]:
        """The best ``top_k`` candidates, best first; raises ``RerankFailed``."""
        ...
