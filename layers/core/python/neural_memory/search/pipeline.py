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

Each stage is named once, in ``_run``: ``retrieval.retrieve``, ``ranking.rank``, ``llm_gate.gate``,
the rerank modes (``rerank_modes.py``) and ``_cut`` (the rerank floor, MMR, the order a question
asks for: ``asked_order.py``, and each result as the reply shows it: ``results.py``). ``run`` holds
the one fallback: a narrow search first, the query as written when that found too few.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import ValidationError

from neural_memory.models import AutoFiltersStatus, Latency, RerankStatus, SearchFilters
from neural_memory.observability import StageTimer, logger
from neural_memory.search.asked_order import as_asked, question_status
from neural_memory.search.diversity import mmr
from neural_memory.search.filters.inference import FilterProposer, InferenceFailed, KnownValuesCache
from neural_memory.search.filters.time_phrases import date_bounds, narrowed, with_inferred
from neural_memory.search.llm_gate import gate
from neural_memory.search.questions import Question, read_question
from neural_memory.search.ranking import rank
from neural_memory.search.rerank_modes import Reranking
from neural_memory.search.results import search_result
from neural_memory.search.retrieval import retrieve

if TYPE_CHECKING:
    from datetime import datetime

    from neural_memory.models import Candidate, LlmStatus, QuestionStatus, SearchRequest, SearchResult, ThresholdStatus
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.providers.llm.gating import RelevanceScorer
    from neural_memory.providers.rerank.base import Reranker
    from neural_memory.search.ranking import Vectors
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store


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
        timer = StageTimer()
        degraded: list[str] = []
        found = retrieve(self._store, self._embedder, self._settings, workspace_id, request, text, now, timer, degraded)
        with timer.stage("fusion"):
            candidates, vectors = rank(self._store, self._settings, workspace_id, request, found, question, now)
        counts = found.counts | {"fused": len(candidates)}
        llm, candidates = gate(self._scorer, self._settings, request, candidates, timer)
        counts |= {"llmScored": llm.scored, "llmFiltered": llm.filtered}
        candidates, provider, rerank_floor = self._reranking.rerank(request, candidates, degraded, timer, llm)
        threshold, candidates = _above_floor(found.threshold, candidates, provider, rerank_floor)
        counts |= {"reranked": len(candidates) if provider else 0, "rerankDropped": threshold.rerank_dropped}
        kept = _cut(request, candidates, vectors, question)
        counts["returned"] = len(kept)
        rerank = RerankStatus(mode=request.rerank, provider=provider)
        results = [search_result(c, request, llm, rerank, text, self._settings.snippet_chars) for c in kept]
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


def _above_floor(
    threshold: ThresholdStatus, candidates: list[Candidate], provider: str | None, rerank_floor: float | None
) -> tuple[ThresholdStatus, list[Candidate]]:
    """The candidates whose relevance to the last reranker is at least its floor (all of them
    without one): Cohere's or the cross-encoder's score, or the LLM's (the gate's cut)."""
    if rerank_floor is None:
        return threshold, candidates

    def relevance(c: Candidate) -> float:
        return (c.rerank if provider in ("cohere", "local") else c.llm) or 0.0

    kept_above = [c for c in candidates if relevance(c) >= rerank_floor]
    update = {"rerank_min_score": rerank_floor, "rerank_dropped": len(candidates) - len(kept_above)}
    return threshold.model_copy(update=update), kept_above


def _cut(
    request: SearchRequest, candidates: list[Candidate], vectors: Vectors, question: Question | None
) -> list[Candidate]:
    """What is returned: diversified (MMR) when asked, cut to ``topK``, in the order a question asks for."""
    if request.diversity > 0:
        candidates = mmr(candidates, vectors.matched, request.diversity, request.top_k)
    return as_asked(candidates[: request.top_k], question)


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
