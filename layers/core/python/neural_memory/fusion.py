"""Fusion of the lexical and vector lists into one list of candidates, one per observation.

Two documented, bounded methods (``NM_FUSION``):

- ``convex`` (default): ``fused = alpha * v + (1 - alpha) * l`` where ``l`` is BM25 divided by
  the query's best BM25 and ``v`` is cosine similarity rescaled from [min_similarity, 1] to
  [0, 1] (hits below the model's minimum similarity were already dropped). Tuned on SciFact's
  *train* qrels: alpha 0.7 and a 0.2 floor for all-MiniLM-L6-v2 gave nDCG@10 0.7395 against
  0.7249 for the best rank fusion (RRF, k = 5). The cosine term is absolute, so a weak vector
  signal stays weak.
- ``rrf``: reciprocal-rank fusion normalised by its maximum, ``sum_r 1/(k + rank_r) / (R/(k+1))``.

Either way ``R`` (the retrievers that count) is the ones that ran *and could have found the
observation*: the vector retriever cannot find an E-tier observation, which is never embedded,
so its score rests on the lexical side alone and can still reach 1.0. ``fused`` is in [0, 1].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from neural_memory.ingest.tiers import is_embedded
from neural_memory.models import Candidate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Hit

FusionMethod = Literal["convex", "rrf"]


def fuse(
    lexical: Sequence[Hit] | None,
    vector: Sequence[Hit] | None,
    *,
    method: FusionMethod = "convex",
    alpha: float = 0.7,
    min_similarity: float = 0.0,
    k: int = 60,
) -> list[Candidate]:
    """Fuse the lists of the retrievers that ran (None = did not run), best first.

    Each observation keeps its best chunk per retriever (dedup by parent); ties are broken by
    the vector score, then the lexical score, then id, so the order is deterministic.
    """
    if lexical is None and vector is None:
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
        lexical_counts = lexical is not None
        vector_counts = vector is not None and is_embedded(candidate.observation.tier)
        if method == "rrf":
            ranks = (candidate.lexical_rank, candidate.vector_rank)
            total = sum(1.0 / (k + r) for r in ranks if r is not None)
            candidate.fused = min(1.0, total * (k + 1) / max(int(lexical_counts) + int(vector_counts), 1))
            continue
        similarity = max(0.0, ((candidate.vector or 0.0) - min_similarity) / (1.0 - min_similarity))
        weight = alpha if lexical_counts and vector_counts else float(vector_counts)
        candidate.fused = min(1.0, weight * similarity + (1.0 - weight) * (candidate.lexical or 0.0))
    return sorted(
        candidates.values(),
        key=lambda c: (-c.fused, -(c.vector or 0.0), -(c.lexical or 0.0), c.observation.id),
    )
