"""Fusion of the lexical and vector lists into one list of candidates, one per observation.

Two documented, bounded methods (``NM_FUSION``):

- ``convex`` (default): ``fused = alpha * v + (1 - alpha) * l`` where ``l`` is BM25 divided by
  the query's best BM25 and ``v`` is cosine similarity rescaled from [the model's minimum
  similarity, the query's best cosine] to [0, 1] (hits below the minimum were already dropped),
  alpha 0.5. Both sides are relative to the query's best, because the two score scales differ
  by kind of data (abstracts score cosines of 0.6-0.8, chat turns 0.3-0.5); the cosine stays
  anchored at the model's floor, so a weak vector hit does not outweigh a lexical match just by
  being the best of a weak list. An observation missing from a list that was cut at the
  retrieval limit takes that list's lowest score (it ranked below the last one kept), not zero,
  so one retriever's cut does not sink what the other ranks first. Chosen on SciFact *train*
  and LoCoMo *dev* (leave-one-conversation-out) with ``python -m bench.fusion_experiments``:
  nDCG@10 0.7363 and evidence recall@10 0.6642, against 0.7395 and 0.6077 for the former
  absolute-cosine mix (alpha 0.7) fitted to SciFact alone (docs/benchmarks.md has the grid).
- ``rrf``: reciprocal-rank fusion normalised by its maximum, ``sum_r 1/(k + rank_r) / (R/(k+1))``.

Either way ``R`` (the retrievers that count) is the ones that ran *and could have found the
observation*: the vector retriever cannot find an E-tier observation, which is never embedded,
so its score rests on the lexical side alone and can still reach 1.0. ``fused`` is in [0, 1].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from neural_memory.domain.tiers import embeds
from neural_memory.models import Candidate

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from neural_memory.models import Hit

FusionMethod = Literal["convex", "rrf"]


def fuse(
    lexical: Sequence[Hit] | None,
    vector: Sequence[Hit] | None,
    *,
    method: FusionMethod = "convex",
    alpha: float = 0.5,
    min_similarity: float = 0.0,
    k: int = 60,
    cut: tuple[bool, bool] = (False, False),
    now: datetime | None = None,
) -> list[Candidate]:
    """Fuse the lists of the retrievers that ran (None = did not run), best first. ``cut``:
    whether the lexical and the vector retriever returned as many hits as they were asked for
    (so an observation missing from that list ranked below its last entry). ``now``: an
    observation not embedded at that moment (E, a C past its window) is scored by its words
    alone, never as a vector miss.

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
            if kind == "vector":
                candidate.vector_chunk_no = hit.chunk_no
                if candidate.lexical_rank is None:
                    candidate.chunk_no = hit.chunk_no
    cosines = [c.vector for c in candidates.values() if c.vector is not None]
    lexicals = [c.lexical for c in candidates.values() if c.lexical is not None]
    best_cosine = max(cosines, default=1.0)

    def similarity_of(cosine: float) -> float:
        # From the model's floor (0) to the query's best cosine (1).
        if best_cosine <= min_similarity:
            return 1.0
        return max(0.0, (cosine - min_similarity) / (best_cosine - min_similarity))

    # Missing from a list that was cut at the retrieval limit means scoring at most its last
    # entry: that, not zero, stands in for the missing score (a turn the vector side ranked 41st
    # is not unrelated to the query). Missing from a list that was not cut means not found: zero.
    vector_floor = similarity_of(min(cosines)) if cut[1] and cosines else 0.0
    lexical_floor = min(lexicals) if cut[0] and lexicals else 0.0
    for candidate in candidates.values():
        lexical_counts = lexical is not None
        vector_counts = vector is not None and embeds(candidate.observation, now)
        if method == "rrf":
            ranks = (candidate.lexical_rank, candidate.vector_rank)
            total = sum(1.0 / (k + r) for r in ranks if r is not None)
            candidate.fused = min(1.0, total * (k + 1) / max(int(lexical_counts) + int(vector_counts), 1))
            continue
        similarity = vector_floor if candidate.vector is None else similarity_of(candidate.vector)
        lexical_score = lexical_floor if candidate.lexical is None else candidate.lexical
        weight = alpha if lexical_counts and vector_counts else float(vector_counts)
        candidate.fused = min(1.0, weight * similarity + (1.0 - weight) * lexical_score)
    return sorted(
        candidates.values(),
        key=lambda c: (-c.fused, -(c.vector or 0.0), -(c.lexical or 0.0), c.observation.id),
    )
