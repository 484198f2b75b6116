"""Who knows about a subject (``POST /v1/experts``): the search's best candidates under the
filters, aggregated per actor (``engineering/experts.py`` ranks them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from neural_memory.engineering import experts as expert_ranking
from neural_memory.models import DateRange, ExpertsResponse, SearchFilters, SearchRequest
from neural_memory.observability import StageTimer
from neural_memory.search.filters.time_phrases import find_time_phrase
from neural_memory.search.questions import read_question

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from neural_memory.models import Expert, ExpertsRequest
    from neural_memory.search.pipeline import SearchOutcome, SearchPipeline
    from neural_memory.search.questions import Question
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store


# "Lately", "these days", "currently": the last year of the workspace's history.
LATELY = timedelta(days=365)


@dataclass(frozen=True)
class FindingExperts:
    """Who knows about a subject, in one store, at the clock's now."""

    pipeline: SearchPipeline
    store: Store
    settings: Settings
    clock: Callable[[], datetime]

    def find(self, *, workspace_id: str, request: ExpertsRequest, request_id: str) -> ExpertsResponse:
        """Who knows about the query: the search's best ``POOL`` candidates under the filters (fused
        scores; no rerank, no LLM gate), aggregated per actor (``engineering.experts``)."""
        return _find(self.pipeline, self.store, self.settings, self.clock(), workspace_id, request, request_id)


def _find(
    pipeline: SearchPipeline,
    store: Store,
    settings: Settings,
    now: datetime,
    workspace_id: str,
    request: ExpertsRequest,
    request_id: str,
) -> ExpertsResponse:
    timer = StageTimer()
    with timer.stage("retrieval"):  # ages count from it, and "lately" ends at it
        clock = min(expert_ranking.newest_observation(store, workspace_id) or now, now)
    # "who knows about websockets": the people who worked on websockets (a question's frame
    # is not what their work says); "lately", "last year": over that period only.
    asked = read_question(request.query) if settings.read_questions else None
    subject, period, lately = asked_period(asked, request, clock, now)
    kinds: set[expert_ranking.ActorKind] = {"human"}
    kinds |= {"bot"} if request.include_bots else set()
    kinds |= {"agent"} if request.include_agents else set()

    def ranking(within: DateRange | None) -> tuple[list[Expert], int, SearchOutcome]:
        filters = request.filters
        if within is not None:
            filters = (filters or SearchFilters()).model_copy(update={"date_range": within})
        search = SearchRequest.model_validate(
            {
                "query": subject,
                "topK": expert_ranking.POOL,
                "filters": filters,
                "mode": request.mode,
                "rerank": "fast",
                "llmFilter": False,
                "collapseDuplicates": False,  # a duplicate is still its author's observation
            }
        )
        with timer.stage("search"):
            outcome = pipeline.run(workspace_id, search, now)
        with timer.stage("retrieval"):  # who reviewed and merged, whose kind: the stored records
            records = store.read(workspace_id, [r.id for r in outcome.results])
        ranked, candidates = expert_ranking.rank_experts(
            outcome.results,
            records,
            clock,
            request.top_k,
            request.evidence,
            kinds=frozenset(kinds),
            explain=request.explain,
        )
        return ranked, candidates, outcome

    ranked, candidates, outcome = ranking(period)
    degraded = list(outcome.degraded)
    if not ranked and period is not None and lately:
        # Nobody worked on it lately (a quiet module, a dormant history): who knows it at all,
        # said so, rather than nobody.
        ranked, candidates, outcome = ranking(None)
        degraded = [f"period:lately->whole history (nobody since {period.start:%Y-%m-%d})", *outcome.degraded]
        period = None
    return ExpertsResponse(
        request_id=request_id,
        experts=ranked,
        candidates=candidates,
        latency=outcome.latency.model_copy(update={"total": timer.total_ms()}),
        llm=outcome.llm,
        degraded=degraded,
        weights={**expert_ranking.TYPE_WEIGHTS, "default": expert_ranking.DEFAULT_WEIGHT},
        half_life_days=expert_ranking.HALF_LIFE_DAYS,
        recency_share=expert_ranking.RECENCY_SHARE,
        period=period,
    )


def asked_period(
    asked: Question | None, request: ExpertsRequest, clock: datetime, now: datetime
) -> tuple[str, DateRange | None, bool]:
    """What to search for a question, the period it asks about, if any, and whether that is
    "lately": a time phrase ("last year", "since March", "in the past 6 months") as a search's
    ``autoFilters`` read it; else "lately", "these days", "currently" (``Question.recent``) the
    ``LATELY`` up to the workspace's newest observation (the clock ages count from: a history
    imported a year after it ended is not empty "lately"). None when the request's own filters
    bound the dates (they say what is asked)."""
    if asked is None:
        return request.query, None, False
    if asked.kind != "who" or (request.filters is not None and request.filters.date_range is not None):
        return asked.subject, None, False
    phrase = find_time_phrase(asked.subject, now)
    if phrase is not None and phrase.remaining:
        return phrase.remaining, DateRange(start=phrase.start, end=phrase.end), False
    if asked.recent:
        return asked.subject, DateRange(start=clock - LATELY), True
    return asked.subject, None, False
