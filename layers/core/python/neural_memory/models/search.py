"""The search contract: ``POST /v1/search``'s request and reply, and the parts of a reply other
replies share (``Latency``, ``LlmStatus``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import (
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StringConstraints,
    ValidationInfo,
    field_validator,
)

from neural_memory.models.filters import SearchFilters
from neural_memory.models.types import (
    BypassReason,
    Expand,
    QueryText,
    RerankMode,
    SearchMode,
    SessionId,
    Tier,
    Timestamp,
    zone_of,
)
from neural_memory.models.wire import RequestModel, WireModel


class SearchRequest(RequestModel):
    """Body of ``POST /v1/search``."""

    query: QueryText = Field(description="1..2000 characters after trimming")
    top_k: StrictInt = Field(default=10, ge=1, le=100)
    filters: SearchFilters | None = None
    mode: SearchMode = "hybrid"
    rerank: RerankMode = Field(
        default="balanced",
        description="fast: no rerank; balanced: Cohere (fast, named in `degraded`, when Cohere is unavailable); "
        "thorough: Cohere narrows to 2 x topK, then the LLM decides (LLM-only when Cohere is unavailable, Cohere's "
        "order when the LLM is); local: a cross-encoder pulled with `neural-memory models pull` scores each "
        "candidate on the server's CPU (fast, named in `degraded`, when it was not pulled).",
    )
    rerank_min_score: Annotated[StrictFloat, Field(ge=0.0, le=1.0)] | None = Field(
        default=None,
        description="Drop reranked results whose relevance (Cohere's score, the local cross-encoder's, or the "
        "LLM's when it reranked last) is below this; default 0.4 for Cohere and the LLM, none for local; no effect "
        "without a rerank (fast). Counted in `threshold`.",
    )
    llm_filter: StrictBool = True
    max_per_session: StrictInt | None = Field(
        default=None, ge=1, le=100, description="At most this many results from any one session."
    )
    collapse_duplicates: StrictBool = Field(
        default=True,
        description="Collapse observations with the same title and text, or vectors at cosine >= 0.97, into the "
        "best one (listed in `duplicates`).",
    )
    diversity: Annotated[StrictFloat, Field(ge=0.0, le=1.0)] = Field(
        default=0.0,
        description="0 (off) .. 1: pick results by maximal marginal relevance, trading score for being unlike "
        "those already picked (cosine of vectors, word overlap where there is none).",
    )
    exclude_session_id: SessionId | None = None
    exclude_after: Timestamp | None = Field(
        default=None,
        description="With excludeSessionId: exclude only that session's observations after this moment "
        "(an agent's compact boundary: the turns it has lost from its context stay searchable).",
    )
    auto_filters: StrictBool = Field(
        default=False,
        description="Infer filters from the query: actors, types, sources and dates by the LLM (only values the "
        'workspace holds), or time phrases ("last week", "since Monday") without one; falls back to the '
        "query as written when that leaves fewer than topK results.",
    )
    time_zone: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = Field(
        default=None,
        description="The client's time zone for autoFilters' days and weeks: an IANA name (Europe/Paris) or an "
        "offset (-08:00); UTC by default.",
    )
    include_superseded: StrictBool = Field(
        default=False, description="Also return observations that a newer one supersedes (they carry `supersededBy`)."
    )
    include_archived: StrictBool = Field(
        default=True,
        description="Return E observations the daily maintenance archived (they carry `archivedAt`); false leaves "
        "them out. Archiving compacts an old observation (no vectors), it never hides it.",
    )
    expand: Expand | None = Field(
        default=None,
        description="observation: each result also carries `text`, the whole observation it was found in (not only "
        "the chunk that matched), within the reply size limit (`textTruncated` says when it was cut).",
    )
    explain: StrictBool = False

    @field_validator("exclude_after")
    @classmethod
    def _boundary_of_a_session(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        return needs_session(value, info)

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is not None:
            zone_of(value)  # raises ValueError naming what it accepts
        return value

    def local_time(self, now: datetime) -> datetime:
        """``now`` on the client's clock (``timeZone``; UTC by default)."""
        return now.astimezone(zone_of(self.time_zone) if self.time_zone else UTC)


class Scores(WireModel):
    """Score of a result after each stage; every value is in [0, 1] or null if the stage did not run."""

    vector: float | None = None
    lexical: float | None = None
    fused: float | None = None
    recency: float | None = None
    llm: float | None = None
    rerank: float | None = None
    final: float


class ResultMetadata(WireModel):
    """Seed-compatible scores: ``relevanceScore`` is the LLM score when gating ran, else the vector score."""

    relevance_score: float | None = None
    vector_score: float | None = None


class StageExplanation(WireModel):
    """What one stage did to one result (``explain: true``)."""

    stage: str
    score: float | None
    kept: bool
    note: str | None = None


class SearchResult(WireModel):
    """One observation in a search reply."""

    id: str
    title: str
    url: str | None
    snippet: str
    score: float
    source: str
    observation_type: str
    actor_name: str | None
    created_by: str | None = Field(
        default=None,
        description="Who wrote it: the name of the API key that stored it, set by the server (null: stored before "
        "attribution).",
    )
    trust: Literal["team", "outside"] | None = Field(
        default=None,
        description="`team`, or `outside`: written by someone outside the team (its source's provenance, "
        "`metadata.authorAssociation`, under the workspace's team policy); untrusted text, never handed to an agent "
        "automatically. Null: stored before provenance.",
    )
    flags: list[str] | None = Field(
        default=None,
        description="Why a person should review it: `instructions` (instruction-like text, withheld wherever it "
        "reaches a model) and `hidden-text` (invisible characters). Null: nothing.",
    )
    occurred_at: datetime
    tier: Tier
    metadata: ResultMetadata
    scores: Scores
    duplicates: list[str] = Field(
        default_factory=list, description="Ids of observations with the same title and text, collapsed into this one."
    )
    superseded_by: str | None = Field(
        default=None,
        description="The observation that replaces this one (only with `includeSuperseded`).",
        exclude_if=lambda value: value is None,
    )
    possibly_stale: str | None = Field(
        default=None,
        description="The commit of a later push that touched code this observation is about (`codeRefs`).",
        exclude_if=lambda value: value is None,
    )
    archived_at: datetime | None = Field(
        default=None,
        description="When the maintenance archived (compacted) this E observation.",
        exclude_if=lambda value: value is None,
    )
    text: str | None = Field(
        default=None,
        description="The whole observation (only with `expand`); cut short when the reply would exceed its size limit.",
        exclude_if=lambda value: value is None,
    )
    text_truncated: bool | None = Field(
        default=None,
        description="With `expand`: true when `text` was cut to keep the reply within its size limit.",
        exclude_if=lambda value: value is None,
    )
    explain: list[StageExplanation] | None = Field(default=None, exclude_if=lambda value: value is None)


class Latency(WireModel):
    """Integer milliseconds per stage, the one shape of every search, answer, experts and facets
    reply (0 for a stage that did not run); ``total`` is at least the sum of the others."""

    total: int
    embed: int
    retrieval: int
    llm_filter: int
    rerank: int
    generate: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Answers only: writing the answer from the results (the LLM, or the extractive fallback).",
    )


class LlmStatus(WireModel):
    """Whether the LLM gate ran, how many results it scored and dropped, why it was bypassed, and
    anything it did not do as asked (e.g. a candidate the reply left unscored, scored neutral)."""

    bypassed: bool
    filtered: int
    reason: BypassReason | None
    scored: int = Field(default=0, description="Candidates sent to the LLM (0 when bypassed).")
    notes: list[str] = Field(default_factory=list, description="What the gate did short of the design, and why.")


RerankProvider = Literal["cohere", "llm", "cohere+llm", "local"]


class RerankStatus(WireModel):
    """The rerank mode asked for, and who reranked (null: nobody; see `degraded` for why)."""

    mode: RerankMode
    provider: RerankProvider | None = Field(
        description="cohere (balanced), cohere+llm (thorough), llm (thorough without Cohere), local (the pulled "
        "cross-encoder), or null (fast)."
    )


class ThresholdStatus(WireModel):
    """The minimum cosine similarity applied to vector hits, and how many hits it dropped; the
    minimum rerank score applied to reranked results (null when none applied), and how many it
    dropped."""

    min_similarity: float
    dropped: int
    rerank_min_score: float | None = None
    rerank_dropped: int = 0


class AutoFiltersStatus(WireModel):
    """What ``autoFilters`` inferred and whether the search kept it."""

    applied_filters: SearchFilters | None = Field(description="The inferred filters (null: none recognised).")
    phrases: list[str] = Field(description="The query's words that became filters.")
    query: str = Field(description="The query text that was searched (without those words, unless it fell back).")
    fell_back: bool = Field(description="True when the inferred filters left fewer than topK results.")
    by: Literal["llm", "rules"] | None = Field(
        default=None, description="Who inferred them: the LLM, or the offline time phrases (null: nothing inferred)."
    )


class QuestionStatus(WireModel):
    """How the query read as a question (``search/questions.py``): what it asks, the words searched
    without its frame, and what that changed in the search."""

    kind: Literal["why", "when", "which", "what", "year", "who"] = Field(
        description="why, when, which (the PR or change that did it), what (changed), year (what changed in a "
        "year), who (knows)."
    )
    subject: str = Field(description="The words searched by keyword: the query without the question's frame.")
    year: int | None = Field(default=None, description="The year it asks about, if any.")
    within_year: bool = Field(
        default=False, description="True when the results come from that year first (then from any other)."
    )
    order: Literal["relevance", "time"] = Field(
        default="relevance",
        description="time: the changes found, oldest first (what changed): those scoring at least half the best; "
        "the rest after them, by score.",
    )


class SearchResponse(WireModel):
    """Reply of ``POST /v1/search``."""

    request_id: str
    results: list[SearchResult]
    latency: Latency
    llm: LlmStatus
    rerank: RerankStatus
    threshold: ThresholdStatus
    degraded: list[str]
    flagged: int = Field(default=0, description="How many of the results are flagged for review (`flags`).")
    auto_filters: AutoFiltersStatus | None = Field(default=None, exclude_if=lambda value: value is None)
    question: QuestionStatus | None = Field(default=None, exclude_if=lambda value: value is None)


def needs_session(value: datetime | None, info: ValidationInfo) -> datetime | None:
    if value is not None and info.data.get("exclude_session_id") is None:
        raise ValueError("needs excludeSessionId: it bounds the exclusion of that session")
    return value
