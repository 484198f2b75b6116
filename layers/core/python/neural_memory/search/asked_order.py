"""The results in the order a question asks for (``questions.py`` reads the question): "when"
puts the best dated change first, "what changed" lists the changes as they happened; and the
question as the reply states it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.models import QuestionStatus
from neural_memory.search.questions import CHANGE_TYPES

if TYPE_CHECKING:
    from neural_memory.models import Candidate
    from neural_memory.search.questions import Question

TIMELINE_SHARE = 0.5  # of the best score: "what changed" lists those at least this good in time order


def as_asked(kept: list[Candidate], question: Question | None) -> list[Candidate]:
    """The results in the order the question asks for: "when" puts the best dated change first
    (a change, not a page that mentions it, when one scores at least ``TIMELINE_SHARE`` of the
    best); "what changed" (in a year or not) lists the changes found oldest first, as they
    happened (those scoring at least ``TIMELINE_SHARE`` of the best; the rest after them, by
    score); otherwise by score."""
    if question is None:
        return kept
    if question.kind == "when" and kept:
        # Only a change that answers it as well (``TIMELINE_SHARE`` of the best): an unrelated PR
        # is no date for what a note says.
        best = max(c.final for c in kept)
        first = next(
            (
                n
                for n, c in enumerate(kept)
                if c.observation.observation_type in CHANGE_TYPES and c.final >= TIMELINE_SHARE * best
            ),
            0,
        )
        return [kept[first], *kept[:first], *kept[first + 1 :]]
    if question.kind in ("what", "year") and kept:
        # The changes that answer it, as they happened; what only filled the page after them.
        best = max(c.final for c in kept)
        strong = [c for c in kept if c.final >= TIMELINE_SHARE * best]
        weak = [c for c in kept if c.final < TIMELINE_SHARE * best]
        return sorted(strong, key=lambda c: (c.observation.occurred_at, c.observation.id)) + weak
    return kept


def question_status(question: Question | None, *, within_year: bool) -> QuestionStatus | None:
    if question is None:
        return None
    order = "time" if question.kind in ("what", "year") else "relevance"
    return QuestionStatus(
        kind=question.kind, subject=question.subject, year=question.year, within_year=within_year, order=order
    )
