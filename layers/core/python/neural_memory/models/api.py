"""The HTTP contract: request and response models (camelCase on the wire; docs/api.md,
docs/openapi.json).

Wire models forbid unknown fields, bound every string and list, and require timezone-aware
dates, so bad input is a 400 naming the field, never a 500.

One module (~620 lines) because it is one cohesive thing: the whole wire contract, read top to
bottom as docs/api.md is (search, observations, facets, errors, answer).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    StrictBool,
    StrictFloat,
    StrictInt,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from neural_memory.models.types import (
    MAX_CONTENT_CHARS,
    MAX_FILTER_GROUPS,
    MAX_FILTER_VALUES,
    MAX_METADATA_BYTES,
    MAX_SUPERSEDES,
    ActorList,
    ActorName,
    BypassReason,
    Expand,
    MetadataKey,
    MetadataValue,
    ObservationId,
    OccurredAt,
    PromotionReason,
    QueryText,
    RerankMode,
    SearchMode,
    SessionId,
    Slug,
    SlugList,
    Tier,
    TierList,
    Timestamp,
    Url,
    zone_of,
)

__all__ = [
    "WireModel",
    "RequestModel",
    "DateRange",
    "ExcludedValues",
    "FilterGroup",
    "SearchFilters",
    "SearchRequest",
    "Scores",
    "ResultMetadata",
    "StageExplanation",
    "SearchResult",
    "Latency",
    "LlmStatus",
    "RerankProvider",
    "RerankStatus",
    "ThresholdStatus",
    "AutoFiltersStatus",
    "QuestionStatus",
    "SearchResponse",
    "MAX_CODE_REFS",
    "MAX_CODE_PATHS",
    "CodeRef",
    "ObservationIn",
    "ObservationsRequest",
    "WebhookReceipt",
    "ObservationsResponse",
    "Redaction",
    "ObservationOut",
    "PromoteRequest",
    "DeleteResponse",
    "FacetCount",
    "Facets",
    "FacetsResponse",
    "ErrorDetail",
    "ErrorBody",
    "ErrorResponse",
    "AnswerRequest",
    "Citation",
    "AnswerResponse",
]


class WireModel(BaseModel):
    """Base of every request and response model: camelCase aliases, unknown fields rejected."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class RequestModel(WireModel):
    """Base of what clients send: only the documented camelCase names (``topK``, never ``top_k``).
    Code builds these with ``model_validate`` and the same names."""

    model_config = ConfigDict(validate_by_name=False, validate_by_alias=True)


class DateRange(RequestModel):
    """Bounds on ``occurredAt``; both ends inclusive, either optional."""

    start: Timestamp | None = None
    end: Timestamp | None = None

    @model_validator(mode="after")
    def _start_not_after_end(self) -> DateRange:
        if self.start is not None and self.end is not None and self.start > self.end:
            raise ValueError("dateRange.start must not be after dateRange.end")
        return self


# One name for a record's field and its filter: `source` is filtered by `sources`. `sourceTypes`,
# the name it had first, stays accepted (every client, bookmark and console URL has it); sending
# both is a 400 (the second is an unknown field). Replies keep writing `sourceTypes` until a
# major version, so no reader breaks. A record's `sourceType` is something else: the source's
# own kind of event (push, pull_request, deployment), filtered through `observationTypes`.
_SOURCES = AliasChoices("sources", "sourceTypes")
_SOURCES_DESCRIPTION = (
    "Observations whose `source` is one of these (github, vercel, manual, agent...). Also accepted under its "
    "first name, `sourceTypes` (not both)."
)


class ExcludedValues(RequestModel):
    """Values an observation must not have (``filters.not``): any listed value excludes it."""

    source_types: SlugList | None = Field(default=None, validation_alias=_SOURCES, description=_SOURCES_DESCRIPTION)
    observation_types: SlugList | None = None
    actor_names: ActorList | None = None
    tiers: TierList | None = None


class FilterGroup(RequestModel):
    """Conditions combined with AND; the values inside one list are combined with OR; ``not``
    excludes observations having any of its values (a field may be both included and excluded:
    ``sourceTypes: [github, vercel], not: {sourceTypes: [vercel]}`` keeps github); ``metadata``
    keeps observations whose metadata has each key at exactly that value (a string, number or
    boolean of the same type: ``true`` is not ``1``)."""

    source_types: SlugList | None = Field(default=None, validation_alias=_SOURCES, description=_SOURCES_DESCRIPTION)
    observation_types: SlugList | None = None
    actor_names: ActorList | None = None
    tiers: TierList | None = None
    date_range: DateRange | None = None
    excluded: ExcludedValues | None = Field(default=None, alias="not")
    metadata: Annotated[dict[MetadataKey, MetadataValue], Field(min_length=1, max_length=MAX_FILTER_VALUES)] | None = (
        None
    )


class SearchFilters(FilterGroup):
    """The filter groups' conditions at the top level, and ``anyOf``: at least one of these groups
    must match as well (an OR of ANDs; a group holds no ``anyOf`` of its own)."""

    any_of: Annotated[list[FilterGroup], Field(min_length=1, max_length=MAX_FILTER_GROUPS)] | None = None
    fresh: StrictBool | None = Field(
        default=None,
        description="true: leave out observations marked `possiblyStale` (a later change touched their code); "
        "false: only those (what went stale).",
    )


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
        return _needs_session(value, info)

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
    auto_filters: AutoFiltersStatus | None = Field(default=None, exclude_if=lambda value: value is None)
    question: QuestionStatus | None = Field(default=None, exclude_if=lambda value: value is None)


# --------------------------------------------------------------------------- observations


MAX_CODE_REFS = 20
MAX_CODE_PATHS = 500  # paths over all of an observation's code refs


class CodeRef(RequestModel):
    """Code an observation is about: a repository and paths in it. A later GitHub push to that
    repository touching one of the paths marks the observation ``possiblyStale``."""

    repository: Annotated[str, StringConstraints(max_length=200, pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")] = Field(
        description="owner/name, as GitHub names it"
    )
    paths: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=500)]],
        Field(min_length=1, max_length=MAX_CODE_PATHS),
    ] = Field(description="Paths from the repository's root, as a push lists them (src/lib/api.ts)")


class ObservationIn(RequestModel):
    """One observation as a client sends it."""

    id: ObservationId | None = None
    source: Slug
    source_type: Slug | None = None
    observation_type: Slug
    actor_name: ActorName | None = None
    occurred_at: OccurredAt
    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)] | None = Field(
        default=None, description="Optional: when absent, the first words of `content` (a chat turn has no title)."
    )
    content: Annotated[str, StringConstraints(max_length=MAX_CONTENT_CHARS)] = Field(default="", validate_default=True)
    url: Url | None = None
    session_id: SessionId | None = None
    parent_id: ObservationId | None = None
    tier: Tier | None = None
    metadata: dict[Annotated[str, StringConstraints(min_length=1, max_length=100)], JsonValue] = Field(
        default_factory=dict
    )
    supersedes: Annotated[list[ObservationId], Field(min_length=1, max_length=MAX_SUPERSEDES)] | None = Field(
        default=None,
        description="Ids of observations this one replaces (a newer decision, a corrected fact): they drop out "
        "of search unless `includeSuperseded` is true, and carry `supersededBy` when read.",
    )
    code_refs: Annotated[list[CodeRef], Field(min_length=1, max_length=MAX_CODE_REFS)] | None = Field(
        default=None,
        description="Code it is about: when a later GitHub push to one of these repositories touches one of the "
        f"paths, it is marked `possiblyStale` with that push's commit (at most {MAX_CODE_PATHS} paths in all).",
    )

    @field_validator("content")
    @classmethod
    def _content_when_untitled(cls, value: str, info: ValidationInfo) -> str:
        # Only when the title is absent (not when it failed its own checks: one error is enough).
        if "title" in info.data and info.data["title"] is None and not value.strip():
            raise ValueError("must not be empty when there is no title (the title is derived from it)")
        return value

    @field_validator("supersedes")
    @classmethod
    def _not_itself(cls, value: list[str] | None, info: ValidationInfo) -> list[str] | None:
        if value is not None and info.data.get("id") in value:
            raise ValueError("an observation cannot supersede itself")
        return None if value is None else list(dict.fromkeys(value))

    @field_validator("code_refs")
    @classmethod
    def _code_paths(cls, value: list[CodeRef] | None) -> list[CodeRef] | None:
        if value is not None and sum(len(ref.paths) for ref in value) > MAX_CODE_PATHS:
            raise ValueError(f"at most {MAX_CODE_PATHS} paths over all code refs")
        return value

    @field_validator("metadata")
    @classmethod
    def _metadata_size(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        try:  # NaN and Infinity are not JSON: stores (and SQLite's JSON functions) refuse them
            serialised = json.dumps(value, default=str, allow_nan=False)
        except ValueError:
            raise ValueError("metadata must not hold NaN or Infinity") from None
        if len(serialised) > MAX_METADATA_BYTES:
            raise ValueError(f"metadata must serialise to at most {MAX_METADATA_BYTES} bytes")
        return value


class ObservationsRequest(RequestModel):
    """Body of ``POST /v1/observations``: 1..100 observations."""

    observations: list[ObservationIn] = Field(min_length=1, max_length=100)


class WebhookReceipt(WireModel):
    """Reply to a verified webhook delivery: what it was and where it went."""

    delivery_id: str | None = Field(description="The provider's delivery id (GitHub) or event id (Vercel)")
    event: str = Field(description="The provider's event name, e.g. push or deployment.error")
    routed_to: str | None = Field(description="The workspace configured for its repository or team")
    sent_to: str | None = Field(
        default=None,
        description="eventbridge:<bus> (AWS), local (make serve), or null when not ingested (a ping, or skipped)",
    )
    skipped: str | None = Field(
        default=None, description="Why the event is not observed (e.g. an event type the ingestion does not read)"
    )


class ObservationsResponse(WireModel):
    """Reply of ``POST /v1/observations``."""

    ids: list[str]
    created: int
    updated: int
    redacted: int = Field(
        default=0, description="How many of them had a secret (or a `<private>` span) replaced before being stored."
    )
    request_id: str


class Redaction(WireModel):
    """What was taken out of an observation before it was stored: never the value, only where and what."""

    field: str = Field(description="The field it was in: title, content, url, metadata.<key>, codeRefs")
    kind: str = Field(description="What it was: github-token, aws-secret-access-key, url-password, private, …")


class ObservationOut(WireModel):
    """One stored observation, as ``GET /v1/observations/{id}`` returns it."""

    id: str
    source: str
    source_type: str | None
    observation_type: str
    actor_name: str | None
    occurred_at: datetime
    ingested_at: datetime
    expires_at: datetime | None
    title: str
    content: str
    url: str | None
    session_id: str | None
    parent_id: str | None
    tier: Tier
    metadata: dict[str, JsonValue]
    supersedes: list[str] | None
    superseded_by: str | None
    code_refs: list[CodeRef] | None = None
    possibly_stale: str | None = Field(
        default=None, description="The commit of a later push that touched code it is about (`codeRefs`), if any."
    )
    promoted_at: datetime | None = Field(default=None, description="When this observation was promoted from C to A.")
    promoted_by: str | None = Field(
        default=None, description="Who promoted it: `key:<key id>` (the API key that asked) or `auto:answers`."
    )
    promotion_reason: str | None = Field(default=None, description="Why it was promoted, as given.")
    citations: int | None = Field(
        default=None, description="How many LLM answers cited it while C (counted while automatic promotion is on)."
    )
    embedded_at: datetime | None = Field(
        default=None, description="When this E observation was embedded because its content recurred."
    )
    archived_at: datetime | None = Field(
        default=None, description="When the maintenance archived this E observation (searched only on request)."
    )
    redactions: list[Redaction] | None = Field(
        default=None,
        description="Secrets replaced by `[redacted:<kind>]` placeholders before it was stored (where and what, "
        "never the value).",
    )
    request_id: str


class PromoteRequest(RequestModel):
    """Body of ``POST /v1/observations/{id}/promote``."""

    reason: PromotionReason = Field(description="Why this observation is kept for good (1..500 characters).")


class DeleteResponse(WireModel):
    """Reply of ``DELETE /v1/observations/{id}``."""

    id: str
    deleted: bool
    request_id: str


# --------------------------------------------------------------------------- facets


class FacetCount(WireModel):
    """One value of a field and how many observations hold it."""

    value: str
    count: int


class Facets(WireModel):
    """Counts per value of each filterable field, the most frequent first. Each field is counted
    under every filter except its own, so a chosen value's alternatives keep their counts."""

    source_types: list[FacetCount]
    observation_types: list[FacetCount]
    actor_names: list[FacetCount]
    tiers: list[FacetCount]


class FacetsResponse(WireModel):
    """Reply of ``GET /v1/facets``."""

    request_id: str
    total: int = Field(description="Observations of the workspace matching every filter given (all of them if none).")
    facets: Facets
    latency: Latency = Field(description="Counting is `retrieval`; no other stage runs.")
    degraded: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------- errors


class ErrorDetail(WireModel):
    """One problem with the request; ``field`` is the dotted path of the offending field."""

    field: str
    message: str
    type: str


class ErrorBody(WireModel):
    """The error itself."""

    code: str
    message: str
    details: list[ErrorDetail] = Field(default_factory=list)


class ErrorResponse(WireModel):
    """Every non-2xx reply has this shape."""

    error: ErrorBody
    request_id: str


# --------------------------------------------------------------------------- domain


class AnswerRequest(RequestModel):
    """Body of ``POST /v1/answer``."""

    question: QueryText = Field(description="1..2000 characters after trimming")
    filters: SearchFilters | None = None
    top_k: StrictInt = Field(default=5, ge=1, le=20)
    mode: SearchMode = "hybrid"
    exclude_session_id: SessionId | None = None
    exclude_after: Timestamp | None = Field(
        default=None, description="With excludeSessionId: exclude only that session's observations after this moment."
    )

    @field_validator("exclude_after")
    @classmethod
    def _boundary_of_a_session(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        return _needs_session(value, info)


def _needs_session(value: datetime | None, info: ValidationInfo) -> datetime | None:
    if value is not None and info.data.get("exclude_session_id") is None:
        raise ValueError("needs excludeSessionId: it bounds the exclusion of that session")
    return value


class Citation(WireModel):
    """A retrieved observation the answer rests on, with the quoted span and its source url."""

    id: str
    title: str
    url: str | None
    quote: str


class AnswerResponse(WireModel):
    """Reply of ``POST /v1/answer``: every citation id is one of the retrieved observations."""

    request_id: str
    answer: str
    citations: list[Citation]
    method: Literal["llm", "extractive"]
    latency: Latency
    llm: LlmStatus = Field(description="The relevance gate of the search behind the answer.")
    degraded: list[str]
