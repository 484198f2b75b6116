"""The retrieval stage of the search pipeline: the request's filter compiled, the query embedded
(unless keyword), lexical and vector hits fetched in one store call (over-fetching ``topK ×
overfetch_factor``), and vector hits below the model's minimum similarity dropped."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.domain.filters import compile_filter
from neural_memory.domain.tiers import visible_after
from neural_memory.errors import BackendUnavailable, ConfigurationError, InvalidInput
from neural_memory.models import ThresholdStatus
from neural_memory.observability import logger

if TYPE_CHECKING:
    from datetime import datetime

    from neural_memory.models import Hit, SearchRequest, Vector
    from neural_memory.observability import StageTimer
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store


@dataclass(frozen=True)
class Retrieval:
    """What retrieval found: the lexical hits (None: not asked) and the vector hits above the
    floor (None: no query vector), each side's count before the floor, whether either side
    filled its limit (fusion's ``cut``), and the space the vectors are in (``model_id``)."""

    lexical: list[Hit] | None
    vector_hits: list[Hit] | None
    threshold: ThresholdStatus
    model_id: str | None
    cut: tuple[bool, bool]
    counts: dict[str, int]


def retrieve(
    store: Store,
    embedder: Embedder | None,
    config: Settings,
    workspace_id: str,
    request: SearchRequest,
    text: str,
    now: datetime,
    timer: StageTimer,
    degraded: list[str],
) -> Retrieval:
    """One retrieval, the lexical side matching ``text``; what degraded it is added to ``degraded``."""
    flt = compile_filter(
        request.filters,
        live_at=visible_after(now, config.collaborative_after_window),
        exclude_session_id=request.exclude_session_id,
        exclude_after=request.exclude_after,
        include_superseded=request.include_superseded,
        include_archived=request.include_archived,
    )
    vector = None
    if request.mode != "keyword":
        with timer.stage("embed"):
            # The whole question, frame too: the model reads questions (the subject alone measured
            # no better on the question sets).
            vector = embed_query(embedder, request, degraded)
    use_lexical = request.mode in ("keyword", "hybrid")
    model_id = embedder.model_id if embedder and vector else None
    limit = request.top_k * config.overfetch_factor
    with timer.stage("retrieval"):
        retrieved = store.retrieve(
            workspace_id,
            text=text if use_lexical else None,
            vector=vector,
            model_id=model_id,
            flt=flt,
            limit=limit,
        )
    degraded.extend(retrieved.degraded)
    floor = config.min_similarity_for(model_id)
    vector_hits = [hit for hit in retrieved.vector if hit.score >= floor]
    threshold = ThresholdStatus(min_similarity=floor, dropped=len(retrieved.vector) - len(vector_hits))
    return Retrieval(
        lexical=retrieved.lexical if use_lexical else None,
        vector_hits=vector_hits if vector is not None else None,
        threshold=threshold,
        model_id=model_id,
        cut=(len(retrieved.lexical) >= limit, len(retrieved.vector) >= limit),
        counts={
            "lexical": len(retrieved.lexical),
            "vector": len(retrieved.vector),
            "thresholdDropped": threshold.dropped,
        },
    )


def embed_query(embedder: Embedder | None, request: SearchRequest, degraded: list[str]) -> Vector | None:
    if embedder is None:
        if request.mode == "semantic":
            raise InvalidInput("mode", "semantic search needs an embedder (NM_EMBEDDER is 'none'); use keyword")
        degraded.append("vector:skipped (no embedder configured)")
        return None
    try:
        return embedder.embed([request.query], "search_query")[0]
    except (BackendUnavailable, ConfigurationError) as exc:  # an outage, or a key that cannot be read
        if request.mode == "semantic":
            raise
        logger.warning("query embedding failed; answering from lexical only", extra={"reason": str(exc)})
        why = "embedding failed" if isinstance(exc, BackendUnavailable) else f"embedder not configured: {exc}"
        degraded.append(f"vector:skipped ({why})")
        return None
