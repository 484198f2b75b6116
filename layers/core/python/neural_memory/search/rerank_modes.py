"""The rerank stage by mode, each provider called at most once: ``local`` (the pulled
cross-encoder), ``balanced`` (Cohere) and ``thorough`` (Cohere, then the LLM), each falling back
as far as it must, down to ``fast`` (no rerank), the fallback named in ``degraded``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.errors import ConfigurationError
from neural_memory.observability import METRIC_RERANK_DEGRADED, logger, record_reason
from neural_memory.providers.rerank.base import RerankFailed
from neural_memory.providers.rerank.llm import LlmReranker
from neural_memory.search.diversity import DIVERSITY_HEAD

if TYPE_CHECKING:
    from neural_memory.models import Candidate, LlmStatus, RerankProvider, SearchRequest
    from neural_memory.observability import StageTimer
    from neural_memory.providers.llm.gating import RelevanceScorer
    from neural_memory.providers.rerank.base import Reranker
    from neural_memory.settings import Settings


@dataclass
class Reranking:
    """Reranks with the providers it was built with (each None: not configured); ``local``, when
    None, is built from the settings on its first use (`rerank: local`)."""

    settings: Settings
    scorer: RelevanceScorer | None = None
    cohere: Reranker | None = None
    local: Reranker | None = None

    def rerank(
        self,
        request: SearchRequest,
        candidates: list[Candidate],
        degraded: list[str],
        timer: StageTimer,
        llm: LlmStatus,
    ) -> tuple[list[Candidate], RerankProvider | None, float | None]:
        """Rerank by mode, calling each provider at most once: ``local`` is the pulled
        cross-encoder, else fast; ``balanced`` is Cohere, else fast;
        ``thorough`` is Cohere (keeping 2 x topK) then the LLM, the LLM alone without Cohere, and
        Cohere's order without the LLM (never a second Cohere call); an LLM that already failed in
        this search is not called again. Returns the candidates, who reranked them, and the
        minimum relevance to apply: the request's, else Cohere's default after Cohere and the
        gate's threshold after the LLM."""
        mode = request.rerank
        if mode == "fast" or not candidates:
            return candidates, None, None
        # With diversity, MMR picks the topK afterwards: it needs more than the topK to pick from.
        keep = request.top_k if request.diversity <= 0 else max(request.top_k, DIVERSITY_HEAD)
        if mode == "local":
            try:
                with timer.stage("rerank"):
                    by_local = self._local_reranker().rerank(request.query, candidates, keep)
            except RerankFailed as exc:
                _degrade(degraded, "local", "fast", str(exc))
                return candidates, None, None
            return _ranked(by_local), "local", request.rerank_min_score
        cohere_floor = request.rerank_min_score
        if cohere_floor is None:
            cohere_floor = self.settings.cohere_rerank_min_score
        by_cohere: list[Candidate] | None = None
        cohere_why = "Cohere not configured"
        if self.cohere is not None:
            try:
                with timer.stage("rerank"):
                    by_cohere = self.cohere.rerank(request.query, candidates, keep * 2 if mode == "thorough" else keep)
            except RerankFailed as exc:
                cohere_why = str(exc)
        if mode == "balanced":
            if by_cohere is None:
                _degrade(degraded, "balanced", "fast", cohere_why)
                return candidates, None, None
            return _ranked(by_cohere), "cohere", cohere_floor
        by_llm, llm_why = self._llm_rerank(
            request, by_cohere if by_cohere is not None else candidates, keep, timer, llm
        )
        if by_llm is not None:
            if by_cohere is None:
                _degrade(degraded, "thorough", "llm", cohere_why)
            floor = request.rerank_min_score
            if floor is None:
                floor = self.settings.gate_keep_threshold
            return _ranked(by_llm), "cohere+llm" if by_cohere is not None else "llm", floor
        if by_cohere is not None:
            _degrade(degraded, "thorough", "balanced", llm_why)
            return _ranked(by_cohere[:keep]), "cohere", cohere_floor
        _degrade(degraded, "thorough", "fast", f"{cohere_why}; {llm_why}")
        return candidates, None, None

    def _local_reranker(self) -> Reranker:
        """The pulled cross-encoder the settings name (``RerankFailed`` when the name is unknown)."""
        if self.local is None:
            from neural_memory.providers.hub_models import hub_model

            try:
                from neural_memory.providers.rerank.cross_encoder import CrossEncoderReranker
            except ImportError as exc:  # the Lambda layer has no onnxruntime, nor this module
                raise RerankFailed("no local cross-encoder in this deployment") from exc
            try:
                model = hub_model(self.settings.local_reranker, role="rerank")
            except ConfigurationError as exc:
                raise RerankFailed(f"NM_LOCAL_RERANKER: {exc}") from exc
            self.local = CrossEncoderReranker(model, self.settings.data_dir)
        return self.local

    def _llm_rerank(
        self, request: SearchRequest, pool: list[Candidate], keep: int, timer: StageTimer, llm: LlmStatus
    ) -> tuple[list[Candidate] | None, str]:
        """The LLM's order of ``pool`` (the gate's scores reused), or None and why not."""
        if self.scorer is None:
            return None, "no LLM configured"
        if llm.reason in ("error", "timeout"):
            return None, f"the LLM already failed in this search ({llm.reason})"
        try:
            with timer.stage("rerank"):
                return LlmReranker(self.scorer).rerank(request.query, pool, keep), ""
        except RerankFailed as exc:
            return None, str(exc)


def _degrade(degraded: list[str], mode: str, to: str, why: str) -> None:
    # A provider that is not configured is the steady state (every search of the embedded default
    # without a Cohere key degrades balanced): said in the reply and counted, logged only at DEBUG.
    log = logger.debug if "not configured" in why or "no LLM configured" in why else logger.warning
    log("rerank degraded", extra={"mode": mode, "to": to, "reason": why})
    record_reason(METRIC_RERANK_DEGRADED, mode)
    degraded.append(f"rerank:{mode}->{to} ({why})")


def _ranked(candidates: list[Candidate]) -> list[Candidate]:
    """A reranker's order, with ``final`` its score."""
    return [c.model_copy(update={"final": c.rerank or 0.0}) for c in candidates]
