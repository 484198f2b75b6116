"""The wire models of the engineering views (docs/api.md): why an observation changed
(``GET /v1/observations/{id}/lineage``) and who knows about a subject (``/v1/experts``).

Kept apart from ``search.py``: they read the same observations through other lenses, and grow
apart from the search contract."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, StrictBool, StrictInt

from neural_memory.models.filters import DateRange, SearchFilters
from neural_memory.models.search import Latency, LlmStatus
from neural_memory.models.types import QueryText, SearchMode, Tier
from neural_memory.models.wire import RequestModel, WireModel

__all__ = [
    "LinkKind",
    "LineageLink",
    "LineageEntry",
    "LineageResponse",
    "MAX_LINEAGE",
    "DEFAULT_LINEAGE",
    "ExpertsRequest",
    "ExpertEvidence",
    "Expert",
    "ExpertsResponse",
]

MAX_LINEAGE = 200
DEFAULT_LINEAGE = 50

# supersedes / supersededBy: the supersession chain (older / newer versions, however far along);
# the others: an engineering key both observations hold in their metadata.
LinkKind = Literal["supersedes", "supersededBy", "commit", "pullRequest", "issue", "deployment", "staleBy"]


class LineageLink(WireModel):
    """Why an entry is in the lineage: the kind of link and the key it shares (a commit sha,
    ``owner/repo#number``, a deployment id), or the id next to it in a supersession chain."""

    kind: LinkKind
    key: str


class LineageEntry(WireModel):
    """One observation of a lineage, with every link that brought it in (none: the subject)."""

    id: str
    title: str
    source: str
    observation_type: str
    actor_name: str | None
    occurred_at: datetime
    url: str | None
    tier: Tier
    superseded_by: str | None
    subject: bool = Field(description="True for the observation the lineage was asked for.")
    links: list[LineageLink] = Field(description="How it is linked to the subject; empty for the subject.")


class LineageResponse(WireModel):
    """Reply of ``GET /v1/observations/{id}/lineage``: the subject and everything linked to it,
    oldest first."""

    request_id: str
    id: str
    timeline: list[LineageEntry] = Field(description="Oldest first; the subject is among them (`subject: true`).")
    truncated: bool = Field(description="True when more observations share a key than `limit` let in.")


# --------------------------------------------------------------------------- experts


class ExpertsRequest(RequestModel):
    """Body of ``POST /v1/experts`` (``GET`` takes the same as query parameters)."""

    query: QueryText = Field(description="The subject, as for a search: 1..2000 characters after trimming")
    filters: SearchFilters | None = None
    mode: SearchMode = Field(
        default="keyword",
        description="How the candidates are found: keyword by default (measured on real histories: who worked on "
        "a subject's words and files; hybrid also brings its loosely related neighbours).",
    )
    top_k: StrictInt = Field(default=5, ge=1, le=20, description="How many actors at most.")
    evidence: StrictInt = Field(default=3, ge=1, le=10, description="Evidence ids per actor at most.")
    include_bots: StrictBool = Field(
        default=False, description="Also rank bots (a `[bot]` login, or an event its payload marks as a bot's)."
    )
    include_agents: StrictBool = Field(
        default=False, description="Also rank agents (what an agent wrote: source `agent` or `neural-memory.*`)."
    )
    explain: StrictBool = Field(default=False, description="Each expert carries `why`: what their score is made of.")


class ExpertEvidence(WireModel):
    """One observation that counts for an actor, and what it added to the actor's score."""

    id: str
    title: str
    observation_type: str
    occurred_at: datetime
    contribution: float = Field(description="relevance x type weight x role share x age factor, in [0, 1]")
    role: Literal["author", "reviewer", "merger"] = Field(
        default="author", description="How it credits the actor: wrote it, reviewed it or merged it."
    )


class Expert(WireModel):
    """One actor, ranked by the relevance of their observations to the query."""

    actor_name: str
    kind: Literal["human", "bot", "agent"] = Field(default="human", description="A person, a bot or an agent.")
    score: float = Field(description="The actor's score divided by the best actor's: the first is 1.0.")
    observations: int = Field(description="How many of the search's candidates are theirs.")
    counts: dict[str, int] = Field(description="Their candidates per observation type.")
    evidence: list[ExpertEvidence] = Field(description="Their strongest observations, best first.")
    why: str | None = Field(
        default=None, description="With `explain`: what the score is made of.", exclude_if=lambda value: value is None
    )


class ExpertsResponse(WireModel):
    """Reply of ``/v1/experts``: actors best first, and how the search behind it went."""

    request_id: str
    experts: list[Expert]
    candidates: int = Field(
        description="Observations of the search that were aggregated (those without an actor left out)."
    )
    latency: Latency = Field(description="The search behind the ranking, stage by stage (as every reply's).")
    llm: LlmStatus = Field(description="The relevance gate: never run for experts (reason `disabled`).")
    degraded: list[str]
    weights: dict[str, float] = Field(description="The weight of each observation type (others weigh `default`).")
    half_life_days: float = Field(
        description="Age (from the workspace's newest observation) at which the recent share of a credit halves."
    )
    recency_share: float = Field(description="The share of a credit that fades with age; the rest counts for ever.")
    period: DateRange | None = Field(
        default=None,
        description='The period the question asked about, which the ranking kept to: "lately", "these days", '
        '"currently" the year up to the workspace\'s newest observation; a time phrase ("last year", "since '
        'March", "in the past 6 months") as a search\'s `autoFilters` read it. Null when it names none, or when '
        "`filters.dateRange` bounds the dates, or when nobody worked on the subject lately and the whole history "
        "answered (`degraded` says so).",
    )
