"""The search pipeline, the same for every store, timing every stage:

embed → retrieve (lexical + vector, one filter, over-fetch ``topK × factor``) → drop vector hits
below the model's minimum similarity → fuse (``fusion.py``) → recency and tier → LLM gate →
rerank by mode → cut to ``topK``.

Scores: ``vector`` is cosine clipped to [0, 1]; ``lexical`` is BM25 / best BM25; ``fused`` is in
[0, 1] (see ``fusion.py``); for C-tier results ``(1 - w) fused + w recency`` with recency halving
every ``recency_half_life_days``; then the tier boost, divided by the largest boost so ``final``
stays in [0, 1]. When the gate runs, ``final = 0.6 llm + 0.4 vector`` (the fused score stands in
for a result that has no vector score, e.g. E tier); when a reranker runs, ``final`` is its score.
Every fallback is recorded in ``degraded`` or ``llm.reason``, logged and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

from pydantic import ValidationError

from neural_memory.errors import BackendUnavailable, ConfigurationError, InvalidInput
from neural_memory.models import (
    AutoFiltersStatus,
    Latency,
    LlmStatus,
    ResultMetadata,
    Scores,
    SearchResult,
    StageExplanation,
    ThresholdStatus,
)
from neural_memory.observability import (
    METRIC_GATE_BYPASSED,
    METRIC_GATE_FILTERED,
    METRIC_RERANK_DEGRADED,
    StageTimer,
    logger,
    record_count,
    record_reason,
)
from neural_memory.providers.llm.gating import ScoringFailed
from neural_memory.providers.rerank.base import RerankFailed
from neural_memory.providers.rerank.chained import ChainedReranker
from neural_memory.providers.rerank.llm import LlmReranker
from neural_memory.search.diversity import (
    DIVERSITY_HEAD,
    cap_per_session,
    collapse_duplicates,
    collapse_near_duplicates,
    mmr,
)
from neural_memory.search.filters.inference import FilterProposer, InferenceFailed, KnownValuesCache
from neural_memory.search.filters.model import compile_filter
from neural_memory.search.filters.time_phrases import date_bounds, narrowed, with_inferred
from neural_memory.search.fusion import fuse
from neural_memory.search.snippets import snippet

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from neural_memory.models import BypassReason, Candidate, RerankMode, SearchRequest, Vector
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.providers.llm.gating import RelevanceScorer
    from neural_memory.providers.rerank.base import Reranker
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store

_CHEAPER: dict[RerankMode, RerankMode] = {"thorough": "balanced", "balanced": "fast"}
_GATE_WEIGHT = 0.6


@dataclass
class SearchOutcome:
    """Everything a search reply needs except the request id."""

    results: list[SearchResult]
    latency: Latency
    llm: LlmStatus
    threshold: ThresholdStatus
    degraded: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # full text of each result, for answers
    auto_filters: AutoFiltersStatus | None = None
    ran: frozenset[str] = frozenset()  # the stages that ran, by their latency names


class SearchPipeline:
    """Runs one search for one workspace with the providers it was built with."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        settings: Settings,
        scorer: RelevanceScorer | None = None,
        cohere: Reranker | None = None,
        proposer: FilterProposer | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._settings = settings
        self._scorer = scorer
        self._cohere = cohere
        self._proposer = proposer
        self._known = KnownValuesCache(store)

    def run(self, workspace_id: str, request: SearchRequest, now: datetime) -> SearchOutcome:
        """Search ``workspace_id``; raises ``InvalidInput`` or ``BackendUnavailable`` only when no
        answer is possible (e.g. semantic mode with no embedder). With ``autoFilters``, first
        with the filters the query implies; if those leave fewer than ``topK`` results, again as
        written (named in ``degraded``)."""
        if not request.auto_filters:
            return self._run(workspace_id, request, now)
        notes: list[str] = []
        implied = self._implied(workspace_id, request, now, notes)
        outcome = self._narrowed_or_wide(workspace_id, request, now, implied)
        outcome.degraded[:0] = notes
        return outcome

    def _narrowed_or_wide(
        self,
        workspace_id: str,
        request: SearchRequest,
        now: datetime,
        implied: tuple[SearchRequest, AutoFiltersStatus] | None,
    ) -> SearchOutcome:
        """The search with the inferred filters, or as written when there are none or they leave
        fewer than ``topK`` results (the fallback named in ``degraded``)."""
        if implied is None:
            outcome = self._run(workspace_id, request, now)
            outcome.auto_filters = AutoFiltersStatus(
                applied_filters=None, phrases=[], query=request.query, fell_back=False
            )
            return outcome
        narrow_request, status = implied
        outcome = self._run(workspace_id, narrow_request, now)
        outcome.auto_filters = status
        if len(outcome.results) >= request.top_k:
            return outcome
        wide = self._run(workspace_id, request, now)
        within = repr(status.phrases[0]) if status.phrases else "the inferred filters"
        found = f"{len(outcome.results)} of {request.top_k} results"
        wide.degraded.append(f"autoFilters:fallback ({found} within {within})")
        wide.auto_filters = status.model_copy(update={"query": request.query, "fell_back": True})
        wide.latency = wide.latency.model_copy(update={"total": wide.latency.total + outcome.latency.total})
        wide.ran |= outcome.ran
        return wide

    def _implied(
        self, workspace_id: str, request: SearchRequest, now: datetime, notes: list[str]
    ) -> tuple[SearchRequest, AutoFiltersStatus] | None:
        """Filters the query implies: the LLM's, constrained to the workspace's values, when one
        is configured; the offline time phrases otherwise or when it fails (noted in ``notes``)."""
        if self._proposer is not None:
            try:
                local = request.local_time(now)
                proposal = self._proposer.propose(request.query, local, self._known.get(workspace_id))
            except InferenceFailed as exc:
                logger.warning("filter inference failed; using time phrases", extra={"reason": exc.detail})
                notes.append(f"autoFilters:llm {exc.reason} ({exc.detail}); time phrases only")
            else:
                inferred = {
                    "sourceTypes": list(proposal.sources),
                    "observationTypes": list(proposal.observation_types),
                    "actorNames": list(proposal.actor_names),
                    "dateRange": date_bounds(proposal.start, proposal.end),
                }
                try:
                    return with_inferred(request, inferred, proposal.query, phrases=[], by="llm")
                except ValidationError:  # e.g. a date range that no longer fits the client's filters
                    notes.append("autoFilters:llm error (inferred filters not valid); time phrases only")
        return narrowed(request, now)

    def _run(self, workspace_id: str, request: SearchRequest, now: datetime) -> SearchOutcome:
        config = self._settings
        timer = StageTimer()
        degraded: list[str] = []
        flt = compile_filter(
            request.filters,
            live_at=now,
            exclude_session_id=request.exclude_session_id,
            exclude_after=request.exclude_after,
            include_superseded=request.include_superseded,
        )
        vector = None
        if request.mode != "keyword":
            with timer.stage("embed"):
                vector = self._embed_query(request, degraded)
        use_lexical = request.mode in ("keyword", "hybrid")
        model_id = self._embedder.model_id if self._embedder and vector else None
        limit = request.top_k * config.overfetch_factor
        with timer.stage("retrieval"):
            retrieved = self._store.retrieve(
                workspace_id,
                text=request.query if use_lexical else None,
                vector=vector,
                model_id=model_id,
                flt=flt,
                limit=limit,
            )
        degraded.extend(retrieved.degraded)
        floor = config.min_similarity_for(model_id)
        vector_hits = [hit for hit in retrieved.vector if hit.score >= floor]
        threshold = ThresholdStatus(min_similarity=floor, dropped=len(retrieved.vector) - len(vector_hits))
        with timer.stage("fusion"):
            candidates = fuse(
                retrieved.lexical if use_lexical else None,
                vector_hits if vector is not None else None,
                method=config.fusion,
                alpha=config.fusion_alpha,
                min_similarity=floor,
                k=config.rrf_k,
                cut=(len(retrieved.lexical) >= limit, len(retrieved.vector) >= limit),
            )
            candidates = sorted((self._time_and_tier(c, now) for c in candidates), key=_by_final)
            if request.collapse_duplicates:
                candidates = collapse_duplicates(candidates)
            vectors = self._vectors(workspace_id, request, model_id, candidates)  # of the head left
            if request.collapse_duplicates:
                candidates = collapse_near_duplicates(candidates, vectors)
            if request.max_per_session is not None:
                candidates = cap_per_session(candidates, request.max_per_session)
        llm, candidates = self._gate(request, candidates, timer)
        candidates, rerank_floor = self._rerank(request, candidates, degraded, timer)
        if rerank_floor is not None:
            kept_above = [c for c in candidates if (c.rerank or 0.0) >= rerank_floor]
            threshold = threshold.model_copy(
                update={"rerank_min_score": rerank_floor, "rerank_dropped": len(candidates) - len(kept_above)}
            )
            candidates = kept_above
        if request.diversity > 0:
            candidates = mmr(candidates, vectors, request.diversity, request.top_k)
        kept = candidates[: request.top_k]
        results = [self._result(c, request, llm) for c in kept]
        latency = Latency(
            total=timer.total_ms(),
            embed=timer.ms("embed"),
            retrieval=timer.ms("retrieval"),
            llm_filter=timer.ms("llmFilter"),
            rerank=timer.ms("rerank"),
        )
        return SearchOutcome(
            results=results,
            latency=latency,
            llm=llm,
            threshold=threshold,
            degraded=degraded,
            texts={c.observation.id: c.observation.content for c in kept},
            ran=timer.ran(),
        )

    def _vectors(
        self, workspace_id: str, request: SearchRequest, model_id: str | None, candidates: list[Candidate]
    ) -> dict[tuple[str, int], Sequence[float]]:
        """The candidates' vectors (by observation id and ``chunk_no``), when a vector search ran
        and near-duplicates or MMR need them: the vector of the passage the vector retriever
        found, else of the candidate's chunk, else (a lexical window has no vector) of chunk 0,
        which is always embedded (passages are numbered first)."""
        if model_id is None or not candidates or not (request.collapse_duplicates or request.diversity > 0):
            return {}
        head = candidates[:DIVERSITY_HEAD]
        choices = {
            (c.observation.id, c.chunk_no): [
                (c.observation.id, n) for n in dict.fromkeys((c.vector_chunk_no, c.chunk_no, 0)) if n is not None
            ]
            for c in head
        }
        found = self._store.chunk_vectors(workspace_id, model_id, [k for keys in choices.values() for k in keys])
        return {
            key: vector
            for key, keys in choices.items()
            if (vector := next((found[k] for k in keys if k in found), None)) is not None
        }

    def _embed_query(self, request: SearchRequest, degraded: list[str]) -> Vector | None:
        if self._embedder is None:
            if request.mode == "semantic":
                raise InvalidInput("mode", "semantic search needs an embedder (NM_EMBEDDER is 'none'); use keyword")
            degraded.append("vector:skipped (no embedder configured)")
            return None
        try:
            return self._embedder.embed([request.query], "search_query")[0]
        except (BackendUnavailable, ConfigurationError) as exc:  # an outage, or a key that cannot be read
            if request.mode == "semantic":
                raise
            logger.warning("query embedding failed; answering from lexical only", extra={"reason": str(exc)})
            why = "embedding failed" if isinstance(exc, BackendUnavailable) else f"embedder not configured: {exc}"
            degraded.append(f"vector:skipped ({why})")
            return None

    def _time_and_tier(self, candidate: Candidate, now: datetime) -> Candidate:
        """Recency for C tier (soft decay, never a cut-off), then the tier boost, kept in [0, 1]."""
        config = self._settings
        score = candidate.fused
        recency = None
        if candidate.observation.tier == "C":
            age_days = max(0.0, (now - candidate.observation.occurred_at).total_seconds() / 86400)
            recency = 0.5 ** (age_days / config.recency_half_life_days)
            score = (1 - config.recency_weight) * score + config.recency_weight * recency
        boosts = config.tier_boosts
        final = score * boosts.get(candidate.observation.tier, 1.0) / max(boosts.values(), default=1.0)
        return candidate.model_copy(update={"recency": recency, "final": min(1.0, final)})

    def _gate(
        self, request: SearchRequest, candidates: list[Candidate], timer: StageTimer
    ) -> tuple[LlmStatus, list[Candidate]]:
        """Score the head of the list with the LLM; drop what it finds irrelevant."""
        config = self._settings
        reason: BypassReason | None = None
        if not request.llm_filter:
            reason = "disabled"
        elif len(candidates) <= config.gate_min_candidates:
            reason = "small_result_set"
        elif self._scorer is None:
            reason = "not_configured"
        if reason is not None or self._scorer is None:
            return _bypassed(reason or "not_configured"), candidates
        head = candidates[: max(request.top_k, config.gate_max_candidates)]
        with timer.stage("llmFilter"):
            try:
                scores = self._scorer.score(request.query, head)
            except ScoringFailed as exc:
                logger.warning("LLM gate failed; falling back to vector scores", extra={"reason": exc.detail})
                return _bypassed(exc.reason), candidates
        kept = []
        for candidate in head:
            llm = scores[candidate.observation.id]
            if llm < config.gate_keep_threshold:
                continue
            base = candidate.vector if candidate.vector is not None else candidate.fused
            kept.append(
                candidate.model_copy(update={"llm": llm, "final": _GATE_WEIGHT * llm + (1 - _GATE_WEIGHT) * base})
            )
        filtered = len(head) - len(kept)
        record_count(METRIC_GATE_FILTERED, filtered)
        return LlmStatus(bypassed=False, filtered=filtered, reason=None), sorted(kept, key=_by_final)

    def _reranker(self, mode: RerankMode) -> tuple[Reranker | None, str]:
        if mode == "balanced":
            return self._cohere, "Cohere not configured"
        if mode == "thorough":
            if self._cohere is None or self._scorer is None:
                return None, "Cohere and an LLM are both needed"
            return ChainedReranker(self._cohere, LlmReranker(self._scorer)), ""
        return None, ""

    def _rerank(
        self, request: SearchRequest, candidates: list[Candidate], degraded: list[str], timer: StageTimer
    ) -> tuple[list[Candidate], float | None]:
        """Rerank by mode; a mode that is unavailable or fails degrades to the next cheaper one.
        Also returns the minimum rerank score to apply: the request's, else Cohere's default when
        Cohere ranked last (balanced), none when the LLM did (thorough) or nothing reranked."""
        mode: RerankMode = request.rerank
        # With diversity, MMR picks the topK afterwards: it needs more than the topK to pick from.
        keep = request.top_k if request.diversity <= 0 else max(request.top_k, DIVERSITY_HEAD)
        while mode != "fast" and candidates:
            reranker, why_not = self._reranker(mode)
            if reranker is not None:
                try:
                    with timer.stage("rerank"):
                        reranked = reranker.rerank(request.query, candidates, keep)
                    floor = request.rerank_min_score
                    if floor is None and mode == "balanced":
                        floor = self._settings.cohere_rerank_min_score
                    return [c.model_copy(update={"final": c.rerank or 0.0}) for c in reranked], floor
                except RerankFailed as exc:
                    why_not = str(exc)
            logger.warning("rerank degraded", extra={"mode": mode, "reason": why_not})
            record_reason(METRIC_RERANK_DEGRADED, mode)
            degraded.append(f"rerank:{mode}->{_CHEAPER[mode]} ({why_not})")
            mode = _CHEAPER[mode]
        return candidates, None

    def _result(self, candidate: Candidate, request: SearchRequest, llm: LlmStatus) -> SearchResult:
        record = candidate.observation
        final = _round(candidate.final)
        vector, lexical = _round(candidate.vector), _round(candidate.lexical)
        explain = _explain(candidate, request, llm) if request.explain else None
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
            superseded_by=record.superseded_by,
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


def _bypassed(reason: BypassReason) -> LlmStatus:
    if reason not in ("disabled", "small_result_set"):
        record_reason(METRIC_GATE_BYPASSED, reason)
    return LlmStatus(bypassed=True, filtered=0, reason=reason)


def _by_final(candidate: Candidate) -> tuple[float, float, str]:
    return (-candidate.final, -(candidate.vector or 0.0), candidate.observation.id)


def _explain(candidate: Candidate, request: SearchRequest, llm: LlmStatus) -> list[StageExplanation]:
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
                                                                      if candidate.recency is not None else "")),
        StageExplanation(stage="llmFilter", score=_round(candidate.llm), kept=True,
                         note=f"bypassed: {llm.reason}" if llm.bypassed else "kept (score >= threshold)"),
        StageExplanation(stage="rerank", score=_round(candidate.rerank), kept=True,
                         note=None if candidate.rerank is not None else "not run"),
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
