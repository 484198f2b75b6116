"""The ranking stage of the search pipeline, after retrieval: the hits fused (``fusion.py``),
recency and the tier boost applied (``time_and_tier``), duplicates collapsed, near-duplicates by
the head's vectors (``head_vectors``) and at most so many a session; ``by_final`` is the order
every later stage keeps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.search.diversity import (
    DIVERSITY_HEAD,
    cap_per_session,
    collapse_duplicates,
    collapse_near_duplicates,
)
from neural_memory.search.fusion import fuse
from neural_memory.search.named_types import named_types
from neural_memory.search.questions import FAVOURED, one_per_change

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from neural_memory.models import Candidate, SearchRequest
    from neural_memory.search.questions import Question
    from neural_memory.search.retrieval import Retrieval
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store


@dataclass(frozen=True)
class Vectors:
    """The head's vectors by (observation id, ``chunk_no``): the passage each was found by, and
    its opening (chunk 0)."""

    matched: dict[tuple[str, int], Sequence[float]]
    openings: dict[tuple[str, int], Sequence[float]]


def rank(
    store: Store,
    config: Settings,
    workspace_id: str,
    request: SearchRequest,
    found: Retrieval,
    question: Question | None,
    now: datetime,
) -> tuple[list[Candidate], Vectors]:
    """The retrieved hits as candidates, best first, and the head's vectors (for MMR later)."""
    candidates = fuse(
        found.lexical,
        found.vector_hits,
        method=config.fusion,
        alpha=config.fusion_alpha,
        min_similarity=found.threshold.min_similarity,
        k=config.rrf_k,
        cut=found.cut,
        now=now,
    )
    named = named_types(request.query)
    if question is not None and question.wants_changes:
        named |= FAVOURED  # it asks for changes: the records of changes come first
    candidates = sorted((time_and_tier(config, c, now, named) for c in candidates), key=by_final)
    if request.collapse_duplicates:
        candidates = collapse_duplicates(candidates)
        if question is not None and question.wants_changes:
            candidates = one_per_change(candidates)
    vectors = head_vectors(store, workspace_id, request, found.model_id, candidates)  # of the head left
    if request.collapse_duplicates:
        candidates = collapse_near_duplicates(candidates, vectors.matched, vectors.openings)
    if request.max_per_session is not None:
        candidates = cap_per_session(candidates, request.max_per_session)
    return candidates, vectors


def head_vectors(
    store: Store, workspace_id: str, request: SearchRequest, model_id: str | None, candidates: list[Candidate]
) -> Vectors:
    """The candidates' vectors (by observation id and ``chunk_no``), when a vector search ran
    and near-duplicates or MMR need them: the vector of the passage the vector retriever
    found, else of the candidate's chunk, else (a lexical window has no vector) of chunk 0,
    which is always embedded (passages are numbered first); and each one's chunk 0, its
    opening (``collapse_near_duplicates``)."""
    if model_id is None or not candidates or not (request.collapse_duplicates or request.diversity > 0):
        return Vectors({}, {})
    head = candidates[:DIVERSITY_HEAD]
    choices = {
        (c.observation.id, c.chunk_no): [
            (c.observation.id, n) for n in dict.fromkeys((c.vector_chunk_no, c.chunk_no, 0)) if n is not None
        ]
        for c in head
    }
    found = store.chunk_vectors(workspace_id, model_id, [k for keys in choices.values() for k in keys])
    matched = {
        key: vector
        for key, keys in choices.items()
        if (vector := next((found[k] for k in keys if k in found), None)) is not None
    }
    openings = {key: found[(key[0], 0)] for key in choices if (key[0], 0) in found}
    return Vectors(matched, openings)


def time_and_tier(config: Settings, candidate: Candidate, now: datetime, named: frozenset[str]) -> Candidate:
    """Recency for C tier (soft decay, never a cut-off), then the tier boost, kept in [0, 1]:
    the largest boost for a candidate of a type the query names (``named_types.py``)."""
    score = candidate.fused
    recency = None
    if candidate.observation.tier == "C":
        age_days = max(0.0, (now - candidate.observation.occurred_at).total_seconds() / 86400)
        recency = 0.5 ** (age_days / config.recency_half_life_days)
        score = (1 - config.recency_weight) * score + config.recency_weight * recency
    boosts = config.tier_boosts
    top = max(boosts.values(), default=1.0)
    boost = top if candidate.observation.observation_type in named else boosts.get(candidate.observation.tier, 1.0)
    final = score * boost / top
    return candidate.model_copy(update={"recency": recency, "final": min(1.0, final)})


def by_final(candidate: Candidate) -> tuple[float, float, float, str]:
    # Equal scores: the newer observation first (the outcome of a deployment, whose words are
    # those of its start), then the id, so the order is deterministic.
    record = candidate.observation
    return (-candidate.final, -(candidate.vector or 0.0), -record.occurred_at.timestamp(), record.id)
