"""The search pipeline: embed → retrieve (lexical + vector, one filter) → fuse → gate → rerank →
cut to topK, timing every stage. The same code runs over every store.

Stages not built yet report themselves honestly: the LLM gate is bypassed with its reason and
``rerank`` modes other than ``fast`` degrade to ``fast`` with an entry in ``degraded``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

from neural_memory.errors import BackendUnavailable, InvalidInput
from neural_memory.filters import compile_filter
from neural_memory.fusion import fuse
from neural_memory.models import (
    Latency,
    LlmStatus,
    ResultMetadata,
    Scores,
    SearchResult,
    StageExplanation,
)
from neural_memory.observability import StageTimer, logger
from neural_memory.snippets import snippet

if TYPE_CHECKING:
    from datetime import datetime

    from neural_memory.embeddings.base import Embedder
    from neural_memory.models import BypassReason, Candidate, SearchRequest, Vector
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store

GATE_MIN_CANDIDATES = 5


@dataclass
class SearchOutcome:
    """Everything a search reply needs except the request id."""

    results: list[SearchResult]
    latency: Latency
    llm: LlmStatus
    degraded: list[str] = field(default_factory=list)


class SearchPipeline:
    """Runs one search for one workspace with the providers it was built with."""

    def __init__(self, store: Store, embedder: Embedder | None, settings: Settings) -> None:
        self._store = store
        self._embedder = embedder
        self._settings = settings

    def run(self, workspace_id: str, request: SearchRequest, now: datetime) -> SearchOutcome:
        """Search ``workspace_id``; raises ``InvalidInput`` or ``BackendUnavailable`` only when no
        answer is possible (e.g. semantic mode with no embedder)."""
        timer = StageTimer()
        degraded: list[str] = []
        flt = compile_filter(request.filters, live_at=now, exclude_session_id=request.exclude_session_id)
        limit = request.top_k * self._settings.overfetch_factor

        vector = None
        if request.mode != "keyword":
            with timer.stage("embed"):
                vector = self._embed_query(request, degraded)
        use_lexical = request.mode in ("keyword", "hybrid")
        with timer.stage("retrieval"):
            retrieved = self._store.retrieve(
                workspace_id,
                text=request.query if use_lexical else None,
                vector=vector,
                model_id=self._embedder.model_id if self._embedder and vector else None,
                flt=flt,
                limit=limit,
            )
        with timer.stage("fusion"):
            candidates = fuse(
                retrieved.lexical if use_lexical else None,
                retrieved.vector if vector is not None else None,
                k=self._settings.rrf_k,
            )
        llm = self._gate_status(request, len(candidates))
        if request.rerank != "fast":
            degraded.append(f"rerank:{request.rerank}->fast (reranker not configured)")
        kept = candidates[: request.top_k]
        results = [self._result(c, request) for c in kept]
        latency = Latency(
            total=timer.total_ms(),
            embed=timer.ms("embed"),
            retrieval=timer.ms("retrieval"),
            llm_filter=0,
            rerank=0,
        )
        return SearchOutcome(results=results, latency=latency, llm=llm, degraded=degraded)

    def _embed_query(self, request: SearchRequest, degraded: list[str]) -> Vector | None:
        if self._embedder is None:
            if request.mode == "semantic":
                raise InvalidInput("mode", "semantic search needs an embedder (NM_EMBEDDER is 'none'); use keyword")
            degraded.append("vector:skipped (no embedder configured)")
            return None
        try:
            return self._embedder.embed([request.query], "search_query")[0]
        except BackendUnavailable as exc:
            if request.mode == "semantic":
                raise
            logger.warning("query embedding failed; answering from lexical only", extra={"reason": str(exc)})
            degraded.append("vector:skipped (embedding failed)")
            return None

    @staticmethod
    def _gate_status(request: SearchRequest, candidates: int) -> LlmStatus:
        reason: BypassReason
        if not request.llm_filter:
            reason = "disabled"
        elif candidates <= GATE_MIN_CANDIDATES:
            reason = "small_result_set"
        else:
            reason = "not_configured"
        return LlmStatus(bypassed=True, filtered=0, reason=reason)

    def _result(self, candidate: Candidate, request: SearchRequest) -> SearchResult:
        record = candidate.observation
        final = _round(candidate.fused)
        vector, lexical = _round(candidate.vector), _round(candidate.lexical)
        explain = None
        if request.explain:
            explain = [
                StageExplanation(
                    stage="retrieval.lexical",
                    score=lexical,
                    kept=candidate.lexical is not None,
                    note=None if candidate.lexical_rank is None else f"rank {candidate.lexical_rank}",
                ),
                StageExplanation(
                    stage="retrieval.vector",
                    score=vector,
                    kept=candidate.vector is not None,
                    note=None if candidate.vector_rank is None else f"rank {candidate.vector_rank}",
                ),
                StageExplanation(stage="fusion", score=final, kept=True, note="normalised reciprocal-rank fusion"),
                StageExplanation(stage="topK", score=final, kept=True, note=f"within topK={request.top_k}"),
            ]
        text = record.content or record.title
        return SearchResult(
            id=record.id,
            title=record.title,
            url=record.url,
            snippet=snippet(text, request.query, self._settings.snippet_chars),
            score=final,
            source=record.source,
            observation_type=record.observation_type,
            actor_name=record.actor_name,
            occurred_at=record.occurred_at,
            tier=record.tier,
            metadata=ResultMetadata(relevance_score=vector, vector_score=vector),
            scores=Scores(vector=vector, lexical=lexical, fused=final, final=final),
            explain=explain,
        )


@overload
def _round(value: float) -> float: ...
@overload
def _round(value: float | None) -> float | None: ...
def _round(value: float | None) -> float | None:
    """Scores go out with 4 decimals: enough to order by, without float noise."""
    return None if value is None else round(value, 4)
