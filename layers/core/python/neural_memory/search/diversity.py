"""Keeping the top of a result list varied: duplicate observations collapsed into the best of
them (the same words, or vectors at cosine >= 0.97), at most N results from one session, and
maximal marginal relevance (``diversity``) choosing the final list.

Collapse and the session cap run on the fused, ranked candidates before the relevance gate and
the reranker, so neither spends a call on a copy; both keep the order of what remains. MMR runs
last, on the final scores.
"""

from __future__ import annotations

import math
import operator
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from neural_memory.models import Candidate

_WORD = re.compile(r"\w+", re.UNICODE)
NEAR_DUPLICATE_COSINE = 0.97
DIVERSITY_HEAD = 50  # candidates compared pairwise (near duplicates, MMR); the rest keep their order


def duplicate_key(candidate: Candidate) -> str:
    """Title and text reduced to their lower-cased words: the same observation re-sent under
    another id, or re-formatted, has the same key."""
    record = candidate.observation
    return " ".join(_WORD.findall(f"{record.title} {record.content}".lower()))


def collapse_duplicates(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The first (best) of each group of duplicates, listing the others' ids in ``duplicates``."""
    kept: dict[str, Candidate] = {}
    merged: dict[str, list[str]] = {}
    for candidate in candidates:
        key = duplicate_key(candidate)
        if key not in kept:
            kept[key] = candidate
        else:
            merged.setdefault(key, []).append(candidate.observation.id)
    # Copied only when something was merged into it: most candidates have no copy.
    return [_with_duplicates(c, merged.get(key, [])) for key, c in kept.items()]


def _with_duplicates(candidate: Candidate, more: list[str]) -> Candidate:
    """``candidate`` listing ``more`` duplicates too (the candidate itself when there are none)."""
    if not more:
        return candidate
    return candidate.model_copy(update={"duplicates": [*candidate.duplicates, *more]})


def cap_per_session(candidates: Sequence[Candidate], limit: int) -> list[Candidate]:
    """At most ``limit`` candidates of any one session, the best ones (observations without a
    session are not capped)."""
    taken: dict[str, int] = {}
    out = []
    for candidate in candidates:
        session = candidate.observation.session_id
        if session is not None:
            if taken.get(session, 0) >= limit:
                continue
            taken[session] = taken.get(session, 0) + 1
        out.append(candidate)
    return out


def collapse_near_duplicates(
    candidates: Sequence[Candidate],
    vectors: Mapping[tuple[str, int], Sequence[float]],
    openings: Mapping[tuple[str, int], Sequence[float]] | None = None,
    threshold: float = NEAR_DUPLICATE_COSINE,
) -> list[Candidate]:
    """Collapse each candidate whose vector is at cosine >= ``threshold`` to a better-ranked kept
    one, and whose opening is too where both have one (``openings``), into it (listed in its
    ``duplicates``); candidates without a vector are always kept. Only the first
    ``DIVERSITY_HEAD`` are compared. The openings keep apart two observations found by passages
    of the same title over different content (``prepare.chunked``), as the passages found keep
    apart two long ones that open alike and end differently."""
    head = list(candidates[:DIVERSITY_HEAD])
    cosines = _pairwise([vectors.get((c.observation.id, c.chunk_no)) for c in head])
    opening = _pairwise([(openings or {}).get((c.observation.id, c.chunk_no)) for c in head])
    kept: list[int] = []
    merged: dict[int, list[str]] = {}
    for i, candidate in enumerate(head):
        matches = [
            (cosine, j)
            for j in kept
            if (cosine := cosines[i][j]) is not None
            and cosine >= threshold
            and ((other := opening[i][j]) is None or other >= threshold)
        ]
        if matches:
            merged.setdefault(max(matches)[1], []).extend([candidate.observation.id, *candidate.duplicates])
        else:
            kept.append(i)
    return [_with_duplicates(head[i], merged.get(i, [])) for i in kept] + list(candidates[DIVERSITY_HEAD:])


def mmr(
    candidates: Sequence[Candidate], vectors: Mapping[tuple[str, int], Sequence[float]], diversity: float, count: int
) -> list[Candidate]:
    """Maximal marginal relevance: repeatedly take the candidate maximising
    ``(1 - diversity) * final - diversity * (its highest similarity to those taken)``, ``count``
    times, then the rest in their order. Similarity is the cosine of the candidates' vectors, or
    the overlap of their words (Jaccard) where either has no vector. Picks among the first
    ``DIVERSITY_HEAD``."""
    pool = list(candidates[:DIVERSITY_HEAD])
    if diversity <= 0 or len(pool) <= 1:
        return list(candidates)
    cosines = _pairwise([vectors.get((c.observation.id, c.chunk_no)) for c in pool])
    words = [set(duplicate_key(c).split()) for c in pool]
    closest = [0.0] * len(pool)  # each candidate's highest similarity to those taken so far
    remaining = list(range(len(pool)))
    order: list[int] = []
    while remaining and len(order) < count:
        pick = max(remaining, key=lambda i: (1 - diversity) * pool[i].final - diversity * closest[i])
        remaining.remove(pick)
        order.append(pick)
        for i in remaining:
            cosine = cosines[i][pick]
            similarity = max(0.0, cosine) if cosine is not None else _overlap(words[i], words[pick])
            closest[i] = max(closest[i], similarity)
    return [pool[i] for i in order] + [pool[i] for i in remaining] + list(candidates[DIVERSITY_HEAD:])


def _overlap(a: set[str], b: set[str]) -> float:
    """Jaccard overlap of two word sets."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _pairwise(vectors: Sequence[Sequence[float] | None]) -> list[list[float | None]]:
    """Cosine of every pair (None where either vector is missing). numpy where installed (the
    embedded store); the Lambda layer has none, and there ``math.sumprod`` does the dot products."""
    n = len(vectors)
    out: list[list[float | None]] = [[None] * n for _ in range(n)]
    present = [i for i, vector in enumerate(vectors) if vector is not None]
    try:
        import numpy as np
    except ImportError:
        units = {i: _unit(vectors[i] or []) for i in present}
        for i in present:
            for j in present:
                out[i][j] = _dot(units[i], units[j])
        return out
    if present:
        matrix = np.stack([np.asarray(vectors[i], dtype=np.float32) for i in present])  # buffers, not floats
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        cosines = (matrix @ matrix.T).tolist()
        for a, i in enumerate(present):
            for b, j in enumerate(present):
                out[i][j] = cosines[a][b]
    return out


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    sumprod = getattr(math, "sumprod", None)  # Python 3.12+
    return float(sumprod(a, b)) if sumprod else sum(map(operator.mul, a, b))


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(_dot(vector, vector))
    return [x / norm for x in vector] if norm > 0 else list(vector)
