"""Answering (``POST /v1/answer``): search, then answer from the results with citations (the LLM
when one is configured, else extractively), and count an LLM answer's citations towards
promotion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from neural_memory.answer.answering import CHANGES_LISTED, AnswerFailed, extractive_answer
from neural_memory.errors import Conflict, NeuralMemoryError
from neural_memory.ingest import lifecycle
from neural_memory.models import AnswerResponse, SearchRequest
from neural_memory.observability import METRIC_ANSWER_LATENCY, StageTimer, logger, record_latency
from neural_memory.providers.llm.base import collecting_fallbacks
from neural_memory.use_cases.searching import log_search

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from neural_memory.answer.answering import LlmAnswerer
    from neural_memory.models import AnswerRequest, Citation
    from neural_memory.search.pipeline import SearchOutcome, SearchPipeline
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store
    from neural_memory.use_cases.promotion import Promotion


@dataclass(frozen=True)
class Answers:
    """Answers questions over one store through ``pipeline``; ``answerer`` None: extractively."""

    pipeline: SearchPipeline
    store: Store
    answerer: LlmAnswerer | None
    promotion: Promotion
    settings: Settings
    clock: Callable[[], datetime]

    def answer(self, workspace_id: str, request: AnswerRequest, request_id: str) -> AnswerResponse:
        """Search, then answer from the results with citations (LLM if configured, else extractive)."""
        timer = StageTimer()
        search = SearchRequest.model_validate(
            {
                "query": request.question,
                "topK": request.top_k,
                "filters": request.filters,
                "mode": request.mode,
                "rerank": request.rerank,
                "excludeSessionId": request.exclude_session_id,
                "excludeAfter": request.exclude_after,
            }
        )
        with collecting_fallbacks() as fallbacks:  # an LLM provider's fallback, named in degraded
            with timer.stage("search"):
                outcome = self.pipeline.run(workspace_id, search, self.clock())
            searched = len(fallbacks)  # the search's own, logged with it as search() does
            outcome.degraded.extend(fallbacks)
            log_search(self.settings, search, outcome)
            texts = outcome.texts
            degraded = list(outcome.degraded)
            method: Literal["llm", "extractive"] = "extractive"
            if self.answerer is None:  # docs/api.md: an extractive answer says why in degraded
                degraded.append("answer:llm->extractive (no LLM configured)")
            elif not outcome.results:
                degraded.append("answer:llm->extractive (nothing retrieved to answer from)")
            with timer.stage("generate"):
                if self.answerer is not None and outcome.results:
                    try:
                        text, citations = self.answerer.answer(request.question, outcome.results, texts)
                        method = "llm"
                    except AnswerFailed as exc:
                        logger.warning("LLM answer failed; answering extractively", extra={"reason": str(exc)})
                        degraded.append(f"answer:llm->extractive ({exc})")
                if method == "extractive":  # sentences from the records: a PR's number is in its metadata
                    records = self.store.read(workspace_id, [r.id for r in outcome.results[:CHANGES_LISTED]])
                    text, citations = extractive_answer(request.question, outcome.results, texts, records)
        degraded.extend(fallbacks[searched:])  # the answer's
        if method == "llm" and self.settings.promote_after_citations:
            self._count_citations(workspace_id, citations, outcome, degraded)
        # The search's own stages, as a search reply has them, then the answer's.
        latency = outcome.latency.model_copy(update={"total": timer.total_ms(), "generate": timer.ms("generate")})
        record_latency(
            METRIC_ANSWER_LATENCY,
            {"total": latency.total, "search": timer.ms("search"), "generate": timer.ms("generate")},
        )
        return AnswerResponse(
            request_id=request_id,
            answer=text,
            citations=citations,
            method=method,
            latency=latency,
            llm=outcome.llm,
            degraded=degraded,
        )

    def _count_citations(
        self, workspace_id: str, citations: Sequence[Citation], outcome: SearchOutcome, degraded: list[str]
    ) -> None:
        """The automatic promotion's rule: count one more citation for each C observation an LLM
        answer cites (a verified quote: the LLM judged it useful, where an extractive answer
        quotes its top results whatever they are), and promote those cited
        ``promote_after_citations`` times. A store that refuses the count costs the answer nothing
        but a line in ``degraded``."""
        tiers = {result.id: result.tier for result in outcome.results}
        cited = sorted({c.id for c in citations if tiers.get(c.id) == "C"})
        if not cited:
            return
        try:
            counts = lifecycle.note_citations(self.store, workspace_id, cited)
            for observation_id, count in sorted(counts.items()):
                if count >= self.settings.promote_after_citations:
                    try:
                        self.promotion.promoted(
                            workspace_id, observation_id, lifecycle.AUTO_PROMOTER, f"cited by {count} answers"
                        )
                    except Conflict:  # promoted (or expired) since it was retrieved
                        continue
        except NeuralMemoryError as exc:
            logger.warning("citations not counted", extra={"reason": str(exc)})
            degraded.append(f"promotion:citations not counted ({exc})")
