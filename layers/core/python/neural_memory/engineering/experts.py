"""Who knows about a subject (``/v1/experts``): the search's candidates for the query, aggregated
per actor, over the whole history.

The candidates are the search's best ``POOL`` (keyword by default; fused scores, no rerank, no
LLM), found by what they say and, for pushes and merged pull requests, by the paths they touched (their content lists
them: "cookie handling" finds the pushes to ``cookies.py``). Each credits its author, and the
reviewers and merger an imported pull request names (``REVIEW_WEIGHT``, ``MERGE_WEIGHT`` of the
author's share). A credit is ``relevance x weight(type) / max weight x age factor``:

- ``relevance``: the candidate's fused score;
- ``weight``: how much doing that shows knowing the subject (``TYPE_WEIGHTS``);
- ``age factor``: ``1 - RECENCY_SHARE + RECENCY_SHARE x 0.5 ** (age / HALF_LIFE_DAYS)``, the age
  counted from the workspace's newest observation, not the wall clock: a decade of ownership
  keeps at least ``1 - RECENCY_SHARE`` of its weight, and a workspace imported from a history
  that ended a year ago is not a year stale.

An actor's score sums their credits best first, the k-th divided by ``sqrt(k)``: breadth counts
(the maintainer who touched the file a hundred times outranks one drive-by pull request that
matches the phrase), with diminishing returns. Bots (a ``[bot]`` login, or a payload's
``bot``) and agents (the authors of conversation turns an agent wrote: source ``agent`` or
``neural-memory.*``; or whoever ``metadata.actorKind`` names so) are left out unless asked for.
Scores go out divided by the best actor's.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from neural_memory.models import Expert, ExpertEvidence
from neural_memory.models.chat_turns import CHAT_TURN_TYPES
from neural_memory.stores.find import Find

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from neural_memory.models import ObservationRecord, SearchResult
    from neural_memory.stores.base import Store

ActorKind = Literal["human", "bot", "agent"]

# The observations aggregated: the search's best POOL (retrieving POOL x overfetch per retriever),
# keyword by default (``ExpertsRequest.mode``). Chosen on three real histories against git's truth
# (docs/benchmarks.md, "Who knows on real history"): keyword candidates beat hybrid ones (a short
# subject's semantic neighbours across a decade are loosely related work), 50 beat 30 and 100,
# and half of a credit halving every two years beat one year and a larger fading share.
POOL = 50
HALF_LIFE_DAYS = 730.0
RECENCY_SHARE = 0.5
REVIEW_WEIGHT = 0.5  # a review shows knowing the subject half as much as landing the change
MERGE_WEIGHT = 0.25  # merging it, a quarter
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
AGENT_SOURCES = ("agent",)
_KINDS: dict[str, ActorKind] = {"human": "human", "bot": "bot", "agent": "agent"}
AGENT_SOURCE_PREFIX = "neural-memory"  # an agent on the bus: neural-memory.<workspace>


def weight(observation_type: str) -> float:
    """The type's weight (``TYPE_WEIGHTS``, else ``DEFAULT_WEIGHT``)."""
    return TYPE_WEIGHTS.get(observation_type, DEFAULT_WEIGHT)


def is_bot(actor_name: str) -> bool:
    """A GitHub App or bot account (``dependabot[bot]``)."""
    return actor_name.endswith("[bot]")


def actor_kind(actor_name: str, record: ObservationRecord | None) -> ActorKind:
    """What the author of ``record`` is: its ``metadata.actorKind`` when the writer says; a bot by
    its login or the payload's word; an agent when an agent wrote a conversation turn (its own
    side of a conversation; a decision an agent records names the person who made it); else a
    person."""
    said = record.metadata.get("actorKind") if record is not None else None
    if isinstance(said, str) and said in _KINDS:
        return _KINDS[said]
    if is_bot(actor_name) or (record is not None and record.metadata.get("bot") is True):
        return "bot"
    if record is not None and record.observation_type in CHAT_TURN_TYPES and _agent_source(record.source):
        return "agent"
    return "human"


def _agent_source(source: str) -> bool:
    return source in AGENT_SOURCES or source.startswith(AGENT_SOURCE_PREFIX)


def newest_observation(store: Store, workspace_id: str) -> datetime | None:
    """When the workspace's latest observation occurred (expired ones included), or None: the
    clock ages count from."""
    found = store.find(workspace_id, Find(newest_first=True, limit=1))
    return found[0].occurred_at if found else None


def age_factor(occurred_at: datetime, clock: datetime) -> float:
    """What age leaves of a credit: at least ``1 - RECENCY_SHARE``, however old."""
    age_days = max(0.0, (clock - occurred_at).total_seconds() / 86400)
    faded: float = 0.5 ** (age_days / HALF_LIFE_DAYS)
    return 1 - RECENCY_SHARE + RECENCY_SHARE * faded


@dataclass
class _Credit:
    value: float
    result: SearchResult
    role: str  # "author", "reviewer", "merger"


@dataclass
class _Actor:
    kind: ActorKind
    credits: list[_Credit] = field(default_factory=list)


def _roles(result: SearchResult, record: ObservationRecord | None) -> list[tuple[str, str, float]]:
    """(actor, role, share) credited for one candidate: its author, and who reviewed or merged it."""
    roles = [(result.actor_name, "author", 1.0)] if result.actor_name else []
    metadata = record.metadata if record is not None else {}
    reviewers = metadata.get("reviewers")
    if isinstance(reviewers, list):
        roles += [(r, "reviewer", REVIEW_WEIGHT) for r in reviewers if isinstance(r, str) and r != result.actor_name]
    merger = metadata.get("mergedBy")
    if isinstance(merger, str) and merger != result.actor_name:
        roles.append((merger, "merger", MERGE_WEIGHT))
    return roles


def rank_experts(
    results: Sequence[SearchResult],
    records: Mapping[str, ObservationRecord],
    clock: datetime,
    top_k: int,
    evidence: int,
    *,
    kinds: frozenset[ActorKind] = frozenset({"human"}),
    explain: bool = False,
) -> tuple[list[Expert], int]:
    """The best ``top_k`` actors of ``kinds`` among ``results`` (ties by name), each with their best
    ``evidence`` observations (and, with ``explain``, why they rank there); and how many results
    were aggregated (those crediting an actor of ``kinds``). ``records``: the results' stored
    records, by id (reviewers, merger, actor kind); ``clock``: the workspace's newest observation."""
    actors: dict[str, _Actor] = {}
    aggregated = 0
    for result in results:
        record = records.get(result.id)
        credited = False
        for name, role, share in _roles(result, record):
            kind = actor_kind(name, record) if role == "author" else ("bot" if is_bot(name) else "human")
            if kind not in kinds:
                continue
            relevance = result.scores.fused or 0.0
            value = relevance * weight(result.observation_type) / _MAX_WEIGHT * share
            value *= age_factor(result.occurred_at, clock)
            actors.setdefault(name, _Actor(kind)).credits.append(_Credit(value, result, role))
            credited = True
        aggregated += credited
    scored: list[tuple[float, str, _Actor]] = []
    for name, actor in actors.items():
        actor.credits.sort(key=lambda c: (-c.value, c.result.id))
        scored.append((sum(c.value / math.sqrt(k) for k, c in enumerate(actor.credits, 1)), name, actor))
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    best = scored[0][0] if scored and scored[0][0] > 0 else 1.0
    experts = [
        Expert(
            actor_name=name,
            kind=actor.kind,
            score=round(score / best, 4),
            observations=len(actor.credits),
            counts=dict(sorted(Counter(c.result.observation_type for c in actor.credits).items())),
            evidence=[
                ExpertEvidence(
                    id=c.result.id,
                    title=c.result.title,
                    observation_type=c.result.observation_type,
                    occurred_at=c.result.occurred_at,
                    contribution=round(c.value, 4),
                    role=c.role,
                )
                for c in actor.credits[:evidence]
            ],
            why=_why(rank, actor, clock) if explain else None,
        )
        for rank, (score, name, actor) in enumerate(scored[:top_k], 1)
    ]
    return experts, aggregated


def _why(rank: int, actor: _Actor, clock: datetime) -> str:
    """One sentence: what the actor's score is made of."""
    roles = Counter(c.role for c in actor.credits)
    types = Counter(c.result.observation_type for c in actor.credits)
    newest = max(c.result.occurred_at for c in actor.credits)
    oldest = min(c.result.occurred_at for c in actor.credits)
    kinds = ", ".join(f"{n} {t}" for t, n in types.most_common(4))
    parts = [f"#{rank}: {len(actor.credits)} matching observations ({kinds})"]
    if roles["reviewer"] or roles["merger"]:
        parts.append(f"reviewed {roles['reviewer']}, merged {roles['merger']}")
    parts.append(f"from {oldest.date()} to {newest.date()}")
    parts.append(
        f"the best counts {actor.credits[0].value:.3f} (relevance x type weight x age factor "
        f"{age_factor(actor.credits[0].result.occurred_at, clock):.2f}); the k-th counts 1/sqrt(k)"
    )
    return "; ".join(parts)
