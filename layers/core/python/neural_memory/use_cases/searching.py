"""Searching (``POST /v1/search``) and its facets (``GET /v1/facets``): the pipeline run, its
metrics and its one log line, and the reply shaped (``expand``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.domain.filters import compile_filter, filter_fields
from neural_memory.domain.tiers import visible_after
from neural_memory.models import Latency, SearchResponse
from neural_memory.models.facets import facets_reply
from neural_memory.observability import (
    METRIC_DEGRADED,
    METRIC_RESULTS_RETURNED,
    METRIC_SEARCH_LATENCY,
    StageTimer,
    logger,
    record_count,
    record_latency,
)
from neural_memory.providers.llm.base import collecting_fallbacks
from neural_memory.search.expansion import expanded

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from neural_memory.models import FacetsResponse, SearchFilters, SearchRequest
    from neural_memory.search.pipeline import SearchOutcome, SearchPipeline
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store


@dataclass(frozen=True)
class Searching:
    """Searches one store through ``pipeline``, at the time ``clock`` gives."""

    pipeline: SearchPipeline
    store: Store
    settings: Settings
    clock: Callable[[], datetime]

    def search(self, workspace_id: str, request: SearchRequest, request_id: str) -> SearchResponse:
        """Run the pipeline and emit its latency and result metrics."""
        with collecting_fallbacks() as fallbacks:  # an LLM provider's fallback, named in degraded
            outcome = self.pipeline.run(workspace_id, request, self.clock())
        outcome.degraded.extend(fallbacks)
        stages = outcome.latency.model_dump(by_alias=True)
        record_latency(METRIC_SEARCH_LATENCY, {k: ms for k, ms in stages.items() if k == "total" or k in outcome.ran})
        record_count(METRIC_RESULTS_RETURNED, len(outcome.results))
        if outcome.degraded:
            record_count(METRIC_DEGRADED, len(outcome.degraded))
        log_search(self.settings, request, outcome)
        response = SearchResponse(
            request_id=request_id,
            results=outcome.results,
            latency=outcome.latency,
            llm=outcome.llm,
            rerank=outcome.rerank,
            threshold=outcome.threshold,
            degraded=outcome.degraded,
            flagged=sum(1 for result in outcome.results if result.flags),
            auto_filters=outcome.auto_filters,
            question=outcome.question,
        )
        if request.expand is not None:
            return expanded(response, outcome.texts, self.settings.max_reply_bytes)
        return response

    def facets(self, workspace_id: str, filters: SearchFilters | None, limit: int, request_id: str) -> FacetsResponse:
        """Counts per value of each filterable field of the workspace's live observations, each
        field under the other fields' filters (see ``Store.facets``), and the total under all."""
        timer = StageTimer()
        live_at = visible_after(self.clock(), self.settings.collaborative_after_window)
        flt = compile_filter(filters, live_at=live_at, exclude_session_id=None, include_archived=True)
        with timer.stage("retrieval"):
            counts = self.store.facets(workspace_id, flt, limit)
        latency = Latency(total=timer.total_ms(), embed=0, retrieval=timer.ms("retrieval"), llm_filter=0, rerank=0)
        return facets_reply(counts, request_id, latency)


def log_search(settings: Settings, request: SearchRequest, outcome: SearchOutcome) -> None:
    """One INFO line per search, "search complete": the time of each stage that ran and those
    over their budget, candidates after each stage, the filters' field names, whether and why
    the LLM was skipped, and what degraded (its kind only). Never the query, a filter's value
    or any content: those may be anything a user wrote."""
    stages = outcome.latency.model_dump(by_alias=True)
    timings = {k: ms for k, ms in stages.items() if k == "total" or k in outcome.ran}
    budgets = settings.stage_budgets_ms()
    applied = outcome.auto_filters.applied_filters if outcome.auto_filters else None
    logger.info(
        "search complete",
        extra={
            "mode": request.mode,
            "topK": request.top_k,
            "stagesMs": timings,
            "overBudget": sorted(k for k, ms in timings.items() if k in budgets and ms > budgets[k]),
            "counts": outcome.counts,
            "filterFields": filter_fields(request.filters),
            "autoFilterFields": filter_fields(applied),
            "llmSkipped": outcome.llm.bypassed,
            "llmSkipReason": outcome.llm.reason,
            "llmNotes": len(outcome.llm.notes),
            "rerank": request.rerank,
            "rerankProvider": outcome.rerank.provider,
            "degraded": [entry.split(" (", 1)[0] for entry in outcome.degraded],
        },
    )
