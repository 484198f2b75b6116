"""Who knows about a subject (``/v1/experts``): the search's candidates for the query, aggregated
per actor.

Each observation of an actor contributes ``relevance x weight(type) / max weight x recency``, in
[0, 1]: ``relevance`` is its fused score (lexical and vector, before any rerank: every candidate is
scored alike, and no provider is called), ``recency`` halves every ``HALF_LIFE_DAYS`` (what someone
did last quarter counts half what they did today: knowledge fades slower than a search's
recency), and the type weights say how much doing that thing shows knowing the subject
(``TYPE_WEIGHTS``). An actor's score sums their contributions best first, the k-th counting 1/k:
breadth counts, with diminishing returns, so a hundred weak pushes do not outweigh one decision.
Bots (a ``[bot]`` login) know nothing and are left out. Scores go out divided by the best actor's.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from neural_memory.models import Expert, ExpertEvidence

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from neural_memory.models import SearchResult

# The observations aggregated: the search's best POOL (retrieving POOL x overfetch per retriever).
POOL = 30
HALF_LIFE_DAYS = 90.0
DEFAULT_WEIGHT = 1.0
# How much doing it shows knowing the subject: deciding (with reasons) more than writing it up,
# landing reviewed code more than proposing or pushing it, automation (a deployment names the
# commit's author) and chat least. Other types weigh DEFAULT_WEIGHT.
TYPE_WEIGHTS: dict[str, float] = {
    "decision": 3.0,
    "design_note": 2.5,
    "pull_request_merged": 2.0,
    "note": 1.5,
    "bug": 1.5,
    "release": 1.5,
    "pull_request_opened": 1.5,
    "push": 1.0,
    "issue_opened": 1.0,
    "issue_comment": 1.0,
    "issue_closed": 1.0,
    "pull_request_closed": 0.5,
    "deployment_created": 0.5,
    "deployment_succeeded": 0.5,
    "deployment_error": 0.5,
    "deployment_canceled": 0.5,
    "conversation_turn": 0.5,
}
_MAX_WEIGHT = max(*TYPE_WEIGHTS.values(), DEFAULT_WEIGHT)


def weight(observation_type: str) -> float:
    """The type's weight (``TYPE_WEIGHTS``, else ``DEFAULT_WEIGHT``)."""
    return TYPE_WEIGHTS.get(observation_type, DEFAULT_WEIGHT)


def is_bot(actor_name: str) -> bool:
    """A GitHub App or bot account (``dependabot[bot]``)."""
    return actor_name.endswith("[bot]")


def contribution(result: SearchResult, now: datetime) -> float:
    """What one observation adds to its actor's score, in [0, 1]."""
    age_days = max(0.0, (now - result.occurred_at).total_seconds() / 86400)
    relevance = result.scores.fused or 0.0
    recency: float = 0.5 ** (age_days / HALF_LIFE_DAYS)
    return relevance * weight(result.observation_type) / _MAX_WEIGHT * recency


def rank_experts(results: Sequence[SearchResult], now: datetime, top_k: int, evidence: int) -> tuple[list[Expert], int]:
    """The best ``top_k`` actors of ``results`` (ties by name), each with their best ``evidence``
    observations; and how many results were aggregated (those with a human actor)."""
    by_actor: dict[str, list[tuple[float, SearchResult]]] = {}
    for result in results:
        if result.actor_name and not is_bot(result.actor_name):
            by_actor.setdefault(result.actor_name, []).append((contribution(result, now), result))
    scored: list[tuple[float, str, list[tuple[float, SearchResult]]]] = []
    for actor, items in by_actor.items():
        items.sort(key=lambda item: (-item[0], item[1].id))
        scored.append((sum(c / k for k, (c, _) in enumerate(items, 1)), actor, items))
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    best = scored[0][0] if scored and scored[0][0] > 0 else 1.0
    experts = [
        Expert(
            actor_name=actor,
            score=round(score / best, 4),
            observations=len(items),
            counts=dict(sorted(Counter(r.observation_type for _, r in items).items())),
            evidence=[
                ExpertEvidence(
                    id=r.id,
                    title=r.title,
                    observation_type=r.observation_type,
                    occurred_at=r.occurred_at,
                    contribution=round(c, 4),
                )
                for c, r in items[:evidence]
            ],
        )
        for score, actor, items in scored[:top_k]
    ]
    return experts, sum(len(items) for items in by_actor.values())
