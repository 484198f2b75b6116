"""The LLM gate, a stage of the search pipeline: the candidates the search could return scored for
relevance by an LLM, and those it finds irrelevant dropped (``gate``); when it cannot run, why
(``bypassed``: the reply's ``llm.reason``, counted)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.models import LlmStatus
from neural_memory.observability import METRIC_GATE_BYPASSED, METRIC_GATE_FILTERED, logger, record_count, record_reason
from neural_memory.providers.llm.gating import NEUTRAL_SCORE, ScoringFailed, blended
from neural_memory.search.ranking import by_final

if TYPE_CHECKING:
    from neural_memory.models import BypassReason, Candidate, SearchRequest
    from neural_memory.observability import StageTimer
    from neural_memory.providers.llm.gating import RelevanceScorer
    from neural_memory.settings import Settings

_UNSCORED_SHOWN = 5  # ids named in the note about candidates the LLM left unscored


def gate(
    scorer: RelevanceScorer | None,
    config: Settings,
    request: SearchRequest,
    candidates: list[Candidate],
    timer: StageTimer,
) -> tuple[LlmStatus, list[Candidate]]:
    """Score with the LLM what the search could return (the topK, or ``gate_max_candidates`` to
    refill what it drops), unless that is ``gate_min_candidates`` or fewer; drop what it finds
    irrelevant. A candidate the reply left out is scored neutral, and named in ``llm.notes``."""
    reason: BypassReason | None = None
    if not request.llm_filter:
        reason = "disabled"
    elif len(candidates[: request.top_k]) <= config.gate_min_candidates:
        reason = "small_result_set"
    elif scorer is None:
        reason = "not_configured"
    if reason is not None or scorer is None:
        return bypassed(reason or "not_configured"), candidates
    head = candidates[: max(request.top_k, config.gate_max_candidates or 0)]
    with timer.stage("llmFilter"):
        try:
            scores = scorer.score(request.query, head)
        except ScoringFailed as exc:
            logger.warning("LLM gate failed; falling back to vector scores", extra={"reason": exc.detail})
            return bypassed(exc.reason), candidates
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
    return status, sorted(kept, key=by_final)


def bypassed(reason: BypassReason) -> LlmStatus:
    if reason not in ("disabled", "small_result_set"):
        record_reason(METRIC_GATE_BYPASSED, reason)
    return LlmStatus(bypassed=True, filtered=0, reason=reason)
