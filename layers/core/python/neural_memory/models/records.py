"""The domain records (snake_case, never on the wire as such): what the service, the stores and the
search pipeline pass between them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
)

from neural_memory.models.types import Tier, Vector

__all__ = [
    "DomainModel",
    "ChunkRole",
    "Chunk",
    "Indexing",
    "ObservationRecord",
    "Hit",
    "Retrieved",
    "UpsertOutcome",
    "FacetCounts",
    "Candidate",
]


class DomainModel(BaseModel):
    """Base of internal records (snake_case, never on the wire as such)."""

    model_config = ConfigDict(extra="forbid")


ChunkRole = Literal["both", "lexical", "passage"]


class Chunk(DomainModel):
    """A searchable piece of an observation; ``vector`` is None when the tier is never embedded.

    ``role``: what the piece is searched by. Content that fits one embedding passage is one
    chunk searched both ways (``both``); longer content is cut twice: into ``passage`` chunks
    sized for the embedding model (vector search only) and ``lexical`` chunks sized for BM25
    (lexical search only), because the two retrievers are best on pieces of different sizes.
    """

    chunk_no: int
    text: str
    role: ChunkRole = "both"
    vector: Vector | None = None
    # Of the embedded text and the model (``embedding_hash``), set with ``vector``: a store that
    # keeps it finds this vector again for the same text (``VectorCache``).
    embedding_hash: str | None = None

    @property
    def lexical(self) -> bool:
        """Searched by BM25."""
        return self.role != "passage"

    @property
    def embedded(self) -> bool:
        """Searched by vector (when its tier is embedded)."""
        return self.role != "lexical"


@dataclass(frozen=True)
class Indexing:
    """How stores index a text field of a record: ``exact`` (the default: filters, keyword),
    ``text`` (analysed for lexical search) or ``stored`` (kept and returned, never searched)."""

    mode: Literal["exact", "text", "stored"]


class ObservationRecord(DomainModel):
    """An observation as the store keeps it (the workspace is passed alongside, never inside).

    This is the one declaration of the stored fields: every store derives its columns, mapping,
    documents and record reader from it (``stores/record_fields.py``).
    """

    id: str
    source: str
    source_type: str | None
    observation_type: str
    actor_name: str | None
    occurred_at: datetime
    ingested_at: datetime
    expires_at: datetime | None
    tier: Tier
    title: Annotated[str, Indexing("text")]
    content: Annotated[str, Indexing("stored")]
    url: str | None
    session_id: str | None
    parent_id: str | None
    metadata: dict[str, JsonValue]
    content_hash: str
    supersedes: list[str] | None = None
    # Set by the store's supersession bookkeeping, never by a client.
    superseded_by: str | None = None
    # ``repository:path`` of each path of the client's ``codeRefs``.
    code_refs: list[str] | None = None
    # Set by the staleness bookkeeping (``engineering.staleness``), never by a client: the commit of
    # the earliest later push that touched one of ``code_refs``.
    possibly_stale: str | None = None
    # When that push occurred: a later push then leaves the mark as it is, unread (the marks cost
    # what changes, not the history of the path). None with a mark made before the field: recomputed.
    stale_at: datetime | None = None
    # The tier lifecycle (``ingest/lifecycle.py``), never set by a client's observation: a C
    # observation promoted to A (when, by whom: ``key:<key id>`` or ``auto:answers``, and why),
    # how many LLM answers cited it (counted only while automatic promotion is on), an E
    # observation embedded because its content recurred, and one archived by the maintenance.
    promoted_at: datetime | None = None
    promoted_by: str | None = None
    promotion_reason: Annotated[str | None, Indexing("stored")] = None
    citations: int | None = None
    recurrence_key: str | None = None  # E only: what "the same content" means (``lifecycle.recurrence_key``)
    embedded_at: datetime | None = None
    archived_at: datetime | None = None
    # What redaction took out before it was kept (``redaction/observations.py``), ``field:kind``
    # each (``content:github-token``), never the value; None: nothing.
    redactions: list[str] | None = None
    # Who wrote it: the name of the API key that first stored it (``auth/roles.py``), or
    # ``system:<what>`` for the server's own writers; set by the server, never by a client. None:
    # stored before there was such a field (its owner is then the workspace's name).
    created_by: str | None = None
    # Who counts (``trust/team.py``): ``team`` or ``outside``, from the provenance its source gave
    # (``metadata.authorAssociation``) and the workspace's team policy at the write; None: stored
    # before provenance (counted as neither).
    trust: Literal["team", "outside"] | None = None
    # What a person should review (``trust/instructions.py``): ``instructions`` (instruction-like
    # text, withheld wherever it reaches a model) and ``hidden-text``; None: nothing.
    flags: list[str] | None = None


class Hit(DomainModel):
    """A chunk returned by one retriever; ``score`` is in [0, 1], higher is better."""

    observation: ObservationRecord
    chunk_no: int
    score: float


class Retrieved(DomainModel):
    """What the store returns for one search: a ranked list per retriever (empty if not asked)."""

    lexical: list[Hit] = Field(default_factory=list)
    vector: list[Hit] = Field(default_factory=list)
    degraded: list[str] = Field(default_factory=list)  # a retriever that failed while the other answered


class UpsertOutcome(DomainModel):
    """Result of a write (``Store.write``): every id in input order, which were new, which replaced a record, and
    which the store refused (the others are stored all the same)."""

    ids: list[str] = Field(default_factory=list)
    created: list[str] = Field(default_factory=list)
    updated: list[str] = Field(default_factory=list)
    failed: dict[str, str] = Field(default_factory=dict)  # refused by the store for good: id -> reason
    # Not written: their lifecycle state changed since the caller read it (``Store.write``'s
    # ``expected``); the caller reads them again and retries.
    stale: list[str] = Field(default_factory=list)
    # The ids written with something redacted (the service's count, not the store's).
    redacted: list[str] = Field(default_factory=list)


class FacetCounts(DomainModel):
    """What a store counts for ``GET /v1/facets``: (value, count) pairs by stored field, and the
    observations matching the whole filter."""

    total: int
    by_field: dict[str, list[tuple[str, int]]]


class Candidate(DomainModel):
    """One observation after fusion: its best chunk (and the best chunk the vector retriever
    found, whose vector stands for it), each retriever's score and rank, the fused score."""

    observation: ObservationRecord
    chunk_no: int
    vector_chunk_no: int | None = None
    vector: float | None = None
    lexical: float | None = None
    vector_rank: int | None = None
    lexical_rank: int | None = None
    fused: float = 0.0
    recency: float | None = None
    llm: float | None = None
    rerank: float | None = None
    final: float = 0.0
    duplicates: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------- answer
