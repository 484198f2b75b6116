"""The search pipeline, the same for every store, timing every stage:

embed → retrieve (lexical + vector, one filter, over-fetch ``topK × factor``) → drop vector hits
below the model's minimum similarity → fuse (``fusion.py``) → recency and tier → LLM gate →
rerank by mode → cut to ``topK``.

Scores: ``vector`` is cosine clipped to [0, 1]; ``lexical`` is BM25 / best BM25; ``fused`` is in
[0, 1] (see ``fusion.py``); for C-tier results ``(1 - w) fused + w recency`` with recency halving
every ``recency_half_life_days``; then the tier boost (the largest one for a type the query
names, ``named_types.py``), divided by the largest boost so ``final`` stays in [0, 1]; equal
scores put the newer observation first. When the gate runs, ``final = 0.6 llm + 0.4 vector`` (the fused score stands in
for a result that has no vector score, e.g. E tier); when a reranker runs, ``final`` is its score
(Cohere's relevance, the local cross-encoder's, or the same blend for the LLM). Every fallback is
recorded in ``degraded`` or ``llm.reason``, logged and counted; no provider is called twice in one search.

One module (~450 lines) because the stages share one request's state (candidates, timings,
degraded, the gate's scores the rerank reuses); the providers, fusion and diversity live apart, as
do the rerank modes (``rerank_modes.py``), the order a question asks for (``asked_order.py``) and
a result as the reply shows it (``results.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import ValidationError

from neural_memory.errors import BackendUnavailable, ConfigurationError, InvalidInput
from neural_memory.models import (
    AutoFiltersStatus,
    Latency,
    LlmStatus,
    QuestionStatus,
    RerankStatus,
    SearchFilters,
    SearchResult,
    ThresholdStatus,
)
from neural_memory.observability import (
    METRIC_GATE_BYPASSED,
    METRIC_GATE_FILTERED,
    StageTimer,
    logger,
    record_count,
    record_reason,
)
from neural_memory.providers.llm.gating import NEUTRAL_SCORE, ScoringFailed, blended
from neural_memory.search.asked_order import as_asked, question_status
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
from neural_memory.search.named_types import named_types
from neural_memory.search.questions import FAVOURED, Question, one_per_change, read_question
from neural_memory.search.rerank_modes import Reranking
from neural_memory.search.results import search_result
from neural_memory.search.tiers import visible_after

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from neural_memory.models import BypassReason, Candidate, SearchRequest, Vector
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.providers.llm.gating import RelevanceScorer
    from neural_memory.providers.rerank.base import Reranker
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store

_UNSCORED_SHOWN = 5  # ids named in the note about candidates the LLM left unscored


@dataclass
class SearchOutcome:
    """Everything a search reply needs except the request id."""

    results: list[SearchResult]
    latency: Latency
    llm: LlmStatus
    threshold: ThresholdStatus
    rerank: RerankStatus
    degraded: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # full text of each result, for answers
    auto_filters: AutoFiltersStatus | None = None
    question: QuestionStatus | None = None
    ran: frozenset[str] = frozenset()  # the stages that ran, by their latency names
    counts: dict[str, int] = field(default_factory=dict)  # candidates after each stage, for the log


@dataclass(frozen=True)
class Vectors:
    """The head's vectors by (observation id, ``chunk_no``): the passage each was found by, and
    its opening (chunk 0)."""

    matched: dict[tuple[str, int], Sequence[float]]
    openings: dict[tuple[str, int], Sequence[float]]


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
        local: Reranker | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._settings = settings
        self._scorer = scorer
        self._proposer = proposer
        self._reranking = Reranking(settings, scorer=scorer, cohere=cohere, local=local)
        self._known = KnownValuesCache(store)

    def run(self, workspace_id: str, request: SearchRequest, now: datetime) -> SearchOutcome:
        """Search ``workspace_id``; raises ``InvalidInput`` or ``BackendUnavailable`` only when no
        answer is possible (e.g. semantic mode with no embedder). A query asked as a question is
        searched by its subject, for what it asks (``questions.py``); the question is read once.

        At most two retrievals (issue 58: a year and ``autoFilters`` each retried on their own,
        up to four): first the narrowest search, within the year a question asks about and the
        filters the query implies (``autoFilters``); when that holds fewer than ``topK``, the query
        as written. A year restricts what comes first, never what can be found: its results lead,
        the best of the others follow. Without a year the search as written answers alone, and
        ``degraded`` names the ``autoFilters`` fallback."""
        question = read_question(request.query) if self._settings.read_questions else None
        year = question.year if question is not None and not (request.filters and request.filters.date_range) else None
        within = _within_year(request, year) if year is not None else request
        notes: list[str] = []
        implied = self._implied(workspace_id, within, now, notes) if request.auto_filters else None
        narrow, status = implied if implied is not None else (within, None)
        outcome = self._run(workspace_id, narrow, now, question, _words(question, narrow, status))
        outcome.question = question_status(question, within_year=year is not None)
        if request.auto_filters:
            outcome.auto_filters = status or AutoFiltersStatus(
                applied_filters=None, phrases=[], query=within.query, fell_back=False
            )
        if narrow is not request and len(outcome.results) < request.top_k:
            outcome = self._widened(workspace_id, request, now, question, outcome, within_year=year is not None)
        outcome.degraded[:0] = notes
        return outcome

    def _widened(
        self,
        workspace_id: str,
        request: SearchRequest,
        now: datetime,
        question: Question | None,
        narrow: SearchOutcome,
        *,
        within_year: bool,
    ) -> SearchOutcome:
        """The second and last retrieval: the query as written, after a narrow search that found
        fewer than ``topK``. Within a year, its results first and the best of the others after
        them; otherwise the wide search's results. The ``autoFilters`` fallback is named in
        ``degraded``."""
        wide = self._run(workspace_id, request, now, question, _words(question, request, None))
        status = narrow.auto_filters
        if status is not None and status.applied_filters is not None:  # the inferred filters fell back
            within = repr(status.phrases[0]) if status.phrases else "the inferred filters"
            found = f"{len(narrow.results)} of {request.top_k} results"
            wide.degraded.append(f"autoFilters:fallback ({found} within {within})")
            status = status.model_copy(update={"query": request.query, "fell_back": True})
        if within_year:
            seen = {r.id for r in narrow.results}
            narrow.results += [r for r in wide.results if r.id not in seen][: request.top_k - len(narrow.results)]
            narrow.texts |= {r.id: wide.texts[r.id] for r in narrow.results if r.id in wide.texts}
            narrow.degraded += [d for d in wide.degraded if d not in narrow.degraded]
            outcome = narrow
        else:
            outcome = wide
            outcome.question = narrow.question
            outcome.counts = {**{f"narrow.{k}": v for k, v in narrow.counts.items()}, **wide.counts}
        outcome.auto_filters = status
        outcome.latency = outcome.latency.model_copy(update={"total": narrow.latency.total + wide.latency.total})
        outcome.ran = narrow.ran | wide.ran
        return outcome

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

    def _run(
        self, workspace_id: str, request: SearchRequest, now: datetime, question: Question | None, text: str
    ) -> SearchOutcome:
        """One retrieval and what follows it, the lexical side matching ``text`` (``_words``)."""
        config = self._settings
        timer = StageTimer()
        degraded: list[str] = []
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
                vector = self._embed_query(request, degraded)
        use_lexical = request.mode in ("keyword", "hybrid")
        model_id = self._embedder.model_id if self._embedder and vector else None
        limit = request.top_k * config.overfetch_factor
        with timer.stage("retrieval"):
            retrieved = self._store.retrieve(
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
        with timer.stage("fusion"):
            candidates = fuse(
                retrieved.lexical if use_lexical else None,
                vector_hits if vector is not None else None,
                method=config.fusion,
                alpha=config.fusion_alpha,
                min_similarity=floor,
                k=config.rrf_k,
                cut=(len(retrieved.lexical) >= limit, len(retrieved.vector) >= limit),
                now=now,
            )
            named = named_types(request.query)
            if question is not None and question.wants_changes:
                named |= FAVOURED  # it asks for changes: the records of changes come first
            candidates = sorted((self._time_and_tier(c, now, named) for c in candidates), key=_by_final)
            if request.collapse_duplicates:
                candidates = collapse_duplicates(candidates)
                if question is not None and question.wants_changes:
                    candidates = one_per_change(candidates)
            vectors = self._vectors(workspace_id, request, model_id, candidates)  # of the head left
            if request.collapse_duplicates:
                candidates = collapse_near_duplicates(candidates, vectors.matched, vectors.openings)
            if request.max_per_session is not None:
                candidates = cap_per_session(candidates, request.max_per_session)
        counts = {
            "lexical": len(retrieved.lexical),
            "vector": len(retrieved.vector),
            "thresholdDropped": threshold.dropped,
            "fused": len(candidates),
        }
        llm, candidates = self._gate(request, candidates, timer)
        counts |= {"llmScored": llm.scored, "llmFiltered": llm.filtered}
        candidates, provider, rerank_floor = self._reranking.rerank(request, candidates, degraded, timer, llm)
        if rerank_floor is not None:
            # The floor is on the last reranker's relevance: Cohere's or the cross-encoder's score, or
            # the LLM's (the gate's cut).
            def relevance(c: Candidate) -> float:
                return (c.rerank if provider in ("cohere", "local") else c.llm) or 0.0

            kept_above = [c for c in candidates if relevance(c) >= rerank_floor]
            threshold = threshold.model_copy(
                update={"rerank_min_score": rerank_floor, "rerank_dropped": len(candidates) - len(kept_above)}
            )
            candidates = kept_above
        counts |= {"reranked": len(candidates) if provider else 0, "rerankDropped": threshold.rerank_dropped}
        if request.diversity > 0:
            candidates = mmr(candidates, vectors.matched, request.diversity, request.top_k)
        kept = as_asked(candidates[: request.top_k], question)
        counts["returned"] = len(kept)
        rerank = RerankStatus(mode=request.rerank, provider=provider)
        results = [search_result(c, request, llm, rerank, text, config.snippet_chars) for c in kept]
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
            rerank=rerank,
            degraded=degraded,
            texts={c.observation.id: c.observation.content for c in kept},
            ran=timer.ran(),
            counts=counts,
        )

    def _vectors(
        self, workspace_id: str, request: SearchRequest, model_id: str | None, candidates: list[Candidate]
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
        found = self._store.chunk_vectors(workspace_id, model_id, [k for keys in choices.values() for k in keys])
        matched = {
            key: vector
            for key, keys in choices.items()
            if (vector := next((found[k] for k in keys if k in found), None)) is not None
        }
        openings = {key: found[(key[0], 0)] for key in choices if (key[0], 0) in found}
        return Vectors(matched, openings)

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

    def _time_and_tier(self, candidate: Candidate, now: datetime, named: frozenset[str]) -> Candidate:
        """Recency for C tier (soft decay, never a cut-off), then the tier boost, kept in [0, 1]:
        the largest boost for a candidate of a type the query names (``named_types.py``)."""
        config = self._settings
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

    def _gate(
        self, request: SearchRequest, candidates: list[Candidate], timer: StageTimer
    ) -> tuple[LlmStatus, list[Candidate]]:
        """Score with the LLM what the search could return (the topK, or ``gate_max_candidates`` to
        refill what it drops), unless that is ``gate_min_candidates`` or fewer; drop what it finds
        irrelevant. A candidate the reply left out is scored neutral, and named in ``llm.notes``."""
        config = self._settings
        reason: BypassReason | None = None
        if not request.llm_filter:
            reason = "disabled"
        elif len(candidates[: request.top_k]) <= config.gate_min_candidates:
            reason = "small_result_set"
        elif self._scorer is None:
            reason = "not_configured"
        if reason is not None or self._scorer is None:
            return _bypassed(reason or "not_configured"), candidates
        head = candidates[: max(request.top_k, config.gate_max_candidates or 0)]
        with timer.stage("llmFilter"):
            try:
                scores = self._scorer.score(request.query, head)
            except ScoringFailed as exc:
                logger.warning("LLM gate failed; falling back to vector scores", extra={"reason": exc.detail})
                return _bypassed(exc.reason), candidates
        notes = []
        unscored = [c.observation.id for c in head if c.observation.id not in scores]
        if unscored:
            shown = ", ".join(unscored[:_UNSCORED_SHOWN]) + (", ..." if len(unscored) > _UNSCORED_SHOWN else "")
            notes.append(
                f"{len(unscored)} of {len(head)} candidates missing from the LLM's reply ({shown}): "
                f"scored neutral {NEUTRAL_SCORE}"
            )
            logger.warning("LLM gate left candidates unscored", extra={"unscored": len(unscored), "sent": len(head)})
        kept = []
        for candidate in head:
            llm = scores.get(candidate.observation.id, NEUTRAL_SCORE)
            if llm >= config.gate_keep_threshold:
                kept.append(candidate.model_copy(update={"llm": llm, "final": blended(llm, candidate)}))
        filtered = len(head) - len(kept)
        record_count(METRIC_GATE_FILTERED, filtered)
        status = LlmStatus(bypassed=False, filtered=filtered, reason=None, scored=len(head), notes=notes)
        return status, sorted(kept, key=_by_final)


def _within_year(request: SearchRequest, year: int) -> SearchRequest:
    """The request restricted to ``year`` (its dates as the filters' range)."""
    bounds = {"start": f"{year:04d}-01-01T00:00:00Z", "end": f"{year:04d}-12-31T23:59:59.999999Z"}
    filters = request.filters.model_dump(by_alias=True, exclude_none=True) if request.filters else {}
    return request.model_copy(update={"filters": SearchFilters.model_validate({**filters, "dateRange": bounds})})


def _words(question: Question | None, request: SearchRequest, status: AutoFiltersStatus | None) -> str:
    """What the lexical side matches. A question's frame is no evidence: its subject (read once,
    from the query as written), without the time phrases ``autoFilters`` took out of the query;
    an LLM's rewritten query as it wrote it; otherwise the query."""
    if question is None or (status is not None and status.by == "llm"):
        return request.query
    subject = question.subject
    for phrase in status.phrases if status is not None else ():
        subject = re.sub(re.escape(phrase), " ", subject, flags=re.IGNORECASE)
    return " ".join(subject.split()) or request.query


def _bypassed(reason: BypassReason) -> LlmStatus:
    if reason not in ("disabled", "small_result_set"):
        record_reason(METRIC_GATE_BYPASSED, reason)
    return LlmStatus(bypassed=True, filtered=0, reason=reason)


def _by_final(candidate: Candidate) -> tuple[float, float, float, str]:
    # Equal scores: the newer observation first (the outcome of a deployment, whose words are
    # those of its start), then the id, so the order is deterministic.
    record = candidate.observation
    return (-candidate.final, -(candidate.vector or 0.0), -record.occurred_at.timestamp(), record.id)
