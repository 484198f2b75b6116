"""A kept candidate as a search reply shows it: its snippet, its scores rounded, and with
``explain`` what each stage did to it."""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

from neural_memory.models import ResultMetadata, Scores, SearchResult, StageExplanation
from neural_memory.search.named_types import named_types
from neural_memory.search.snippets import snippet

if TYPE_CHECKING:
    from neural_memory.models import Candidate, LlmStatus, RerankStatus, SearchRequest


def search_result(
    candidate: Candidate, request: SearchRequest, llm: LlmStatus, rerank: RerankStatus, text: str, snippet_chars: int
) -> SearchResult:
    """The reply's form of a kept candidate: ``text`` is what the snippet is cut around."""
    record = candidate.observation
    final = _round(candidate.final)
    vector, lexical = _round(candidate.vector), _round(candidate.lexical)
    explain = _explain(candidate, request, llm, rerank) if request.explain else None
    return SearchResult(
        id=record.id,
        title=record.title,
        url=record.url,
        snippet=snippet(record.content or record.title, text, snippet_chars),
        score=final,
        source=record.source,
        observation_type=record.observation_type,
        actor_name=record.actor_name,
        created_by=record.created_by,
        trust=record.trust,
        flags=record.flags,
        occurred_at=record.occurred_at,
        tier=record.tier,
        superseded_by=record.superseded_by,
        possibly_stale=record.possibly_stale,
        archived_at=record.archived_at,
        metadata=ResultMetadata(
            relevance_score=_round(candidate.llm) if not llm.bypassed else vector, vector_score=vector
        ),
        scores=Scores(
            vector=vector,
            lexical=lexical,
            fused=_round(candidate.fused),
            recency=_round(candidate.recency),
            llm=_round(candidate.llm),
            rerank=_round(candidate.rerank),
            final=final,
        ),
        duplicates=candidate.duplicates,
        explain=explain,
    )


def _explain(
    candidate: Candidate, request: SearchRequest, llm: LlmStatus, rerank: RerankStatus
) -> list[StageExplanation]:
    def rank(value: int | None) -> str | None:
        return None if value is None else f"rank {value}"

    steps = [
        StageExplanation(stage="retrieval.lexical", score=_round(candidate.lexical), kept=candidate.lexical is not None,
                         note=rank(candidate.lexical_rank)),
        StageExplanation(stage="retrieval.vector", score=_round(candidate.vector), kept=candidate.vector is not None,
                         note=rank(candidate.vector_rank)),
        StageExplanation(stage="fusion", score=_round(candidate.fused), kept=True),
        StageExplanation(stage="recencyAndTier", score=_round(candidate.final if candidate.llm is None and
                         candidate.rerank is None else None), kept=True,
                         note=f"tier {candidate.observation.tier}" + (f", recency {candidate.recency:.3f}"
                                                                      if candidate.recency is not None else "")
                         + (", type named by the query" if candidate.observation.observation_type in
                            named_types(request.query) else "")),
        StageExplanation(stage="llmFilter", score=_round(candidate.llm), kept=True,
                         note=f"bypassed: {llm.reason}" if llm.bypassed else "kept (score >= threshold)"),
        StageExplanation(stage="rerank", score=_round(candidate.rerank), kept=True,
                         note=f"by {rerank.provider}" if rerank.provider and candidate.rerank is not None else
                         "not run"),
        StageExplanation(stage="topK", score=_round(candidate.final), kept=True, note=f"within topK={request.top_k}"),
    ]  # fmt: skip
    return steps


@overload
def _round(value: float) -> float: ...
@overload
def _round(value: float | None) -> float | None: ...
def _round(value: float | None) -> float | None:
    """Scores go out with 4 decimals: enough to order by, without float noise."""
    return None if value is None else round(value, 4)
