"""Rank fusion of retriever lists into one list of candidates, one per observation.

Scale: reciprocal-rank fusion normalised by its maximum. With ``R`` the retrievers that ran
and could have found the observation (the vector retriever cannot find an E-tier observation,
which is never embedded), ``fused = sum_r 1/(k + rank_r) / (R / (k + 1))`` — 1.0 means ranked
first by every retriever that could have, an embedded observation found by only one of two
retrievers scores at most 0.5, and the value is always in [0, 1]. Raw RRF (~0.016) cannot be
thresholded and min-max would inflate weak signals to 1.0; this keeps rank fusion's robustness
with a bounded, comparable score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.ingest.tiers import is_embedded
from neural_memory.models import Candidate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Hit


def fuse(lexical: Sequence[Hit] | None, vector: Sequence[Hit] | None, k: int = 60) -> list[Candidate]:
    """Fuse the lists of the retrievers that ran (None = did not run), best first.

    Each observation keeps its best chunk per retriever (dedup by observation); ties in the
    fused score are broken by the vector score, then the lexical score, then id, so the order
    is deterministic.
    """
    ran = [hits for hits in (lexical, vector) if hits is not None]
    if not ran:
        return []
    candidates: dict[str, Candidate] = {}
    for kind, hits in (("lexical", lexical), ("vector", vector)):
        rank = 0
        for hit in hits or ():
            key = hit.observation.id
            candidate = candidates.get(key)
            if candidate is None:
                candidate = candidates[key] = Candidate(observation=hit.observation, chunk_no=hit.chunk_no)
            if getattr(candidate, f"{kind}_rank") is not None:
                continue  # a later chunk of an observation already ranked by this retriever
            rank += 1
            setattr(candidate, f"{kind}_rank", rank)
            setattr(candidate, kind, hit.score)
            if kind == "vector" and candidate.lexical_rank is None:
                candidate.chunk_no = hit.chunk_no
    for candidate in candidates.values():
        possible = 1 if lexical is not None else 0
        possible += 1 if vector is not None and is_embedded(candidate.observation.tier) else 0
        total = sum(1.0 / (k + r) for r in (candidate.lexical_rank, candidate.vector_rank) if r is not None)
        candidate.fused = min(1.0, total * (k + 1) / max(possible, 1))
    return sorted(
        candidates.values(),
        key=lambda c: (-c.fused, -(c.vector or 0.0), -(c.lexical or 0.0), c.observation.id),
    )
