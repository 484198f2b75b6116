"""Who knows about a subject (``POST /v1/experts``): the search's best candidates under the
filters, aggregated per actor (``engineering/experts.py`` ranks them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.engineering import experts as expert_ranking
from neural_memory.models import ExpertsResponse, SearchRequest
from neural_memory.observability import StageTimer
from neural_memory.search.questions import read_question

if TYPE_CHECKING:
    from datetime import datetime

    from neural_memory.models import ExpertsRequest
    from neural_memory.search.pipeline import SearchPipeline
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store


def find_experts(
    pipeline: SearchPipeline,
    store: Store,
    settings: Settings,
    now: datetime,
    workspace_id: str,
    request: ExpertsRequest,
    request_id: str,
) -> ExpertsResponse:
    """Who knows about the query: the search's best ``POOL`` candidates under the filters (fused
    scores; no rerank, no LLM gate), aggregated per actor (``engineering.experts``)."""
    timer = StageTimer()
    # "who knows about websockets": the people who worked on websockets (a question's frame
    # is not what their work says).
    asked = read_question(request.query) if settings.read_questions else None
    search = SearchRequest.model_validate(
        {
            "query": asked.subject if asked is not None else request.query,
            "topK": expert_ranking.POOL,
            "filters": request.filters,
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
        clock = expert_ranking.newest_observation(store, workspace_id) or now
    kinds: set[expert_ranking.ActorKind] = {"human"}
    kinds |= {"bot"} if request.include_bots else set()
    kinds |= {"agent"} if request.include_agents else set()
    ranked, candidates = expert_ranking.rank_experts(
        outcome.results,
        records,
        min(clock, now),
        request.top_k,
        request.evidence,
        kinds=frozenset(kinds),
        explain=request.explain,
    )
    return ExpertsResponse(
        request_id=request_id,
        experts=ranked,
        candidates=candidates,
        latency=outcome.latency.model_copy(update={"total": timer.total_ms()}),
        llm=outcome.llm,
        degraded=outcome.degraded,
        weights={**expert_ranking.TYPE_WEIGHTS, "default": expert_ranking.DEFAULT_WEIGHT},
        half_life_days=expert_ranking.HALF_LIFE_DAYS,
        recency_share=expert_ranking.RECENCY_SHARE,
    )
