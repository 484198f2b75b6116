"""The observations' contract: what clients write (``POST /v1/observations``), what a read returns
(``GET /v1/observations/{id}``), promotion, deletion, and a webhook delivery's receipt."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, JsonValue, StringConstraints, ValidationInfo, field_validator

from neural_memory.models.types import (
    MAX_CONTENT_CHARS,
    MAX_METADATA_BYTES,
    MAX_SUPERSEDES,
    ActorName,
    ObservationId,
    OccurredAt,
    PromotionReason,
    SessionId,
    Slug,
    Tier,
    Url,
)
from neural_memory.models.wire import RequestModel, WireModel

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
    created_by: Annotated[str, StringConstraints(max_length=200)] | None = Field(
        default=None,
        description="Ignored: the server sets `createdBy` from the API key's name (a client cannot say who wrote it).",
        exclude=True,
    )
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
    created_by: str | None = Field(
        default=None,
        description="Who wrote it: the name of the API key that stored it (`system:<what>` for the server's own "
        "writers), set by the server; null for an observation stored before attribution.",
    )
    trust: Literal["team", "outside"] | None = Field(
        default=None,
        description="`team`, or `outside` (untrusted: never handed to an agent automatically), from its source's "
        "provenance (`metadata.authorAssociation`) under the workspace's team policy; null: stored before provenance.",
    )
    flags: list[str] | None = Field(
        default=None,
        description="Why a person should review it: `instructions` (instruction-like text, withheld wherever it "
        "reaches a model; the record itself is kept as written) and `hidden-text` (invisible characters).",
    )
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
