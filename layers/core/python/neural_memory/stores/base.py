"""The store protocol both backends implement.

It is becoming a port of a few primitives with every feature written once above it
(CONTRIBUTING.md, "Stores: the port"): ``find`` (``stores/find.py``) and ``patch`` are primitives,
and the features moved so far are functions of the folder of their role over them; the other
methods are still each store's own until they move.

Contract for every implementation:
- ``workspace_id`` is a required argument of every method and is part of every query; no
  method can read, search or delete across workspaces.
- Scores in ``Retrieved`` are in [0, 1], higher is better: ``vector`` hits carry cosine
  similarity clipped to [0, 1] (vectors are unit length), ``lexical`` hits carry BM25 divided by
  the best BM25 of the same query (so the best lexical hit scores 1.0).
- Records whose ``expires_at`` is at or before ``Filter.live_at`` are never returned (the
  service passes a ``live_at`` that hides nothing unless expired C observations are deleted);
  archived ones (``archived_at`` set) only with ``Filter.include_archived``.
- Upsert is idempotent: the same (workspace, id) replaces the record and all its chunks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from neural_memory.models import Chunk, DomainModel, ObservationRecord

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from neural_memory.models import FacetCounts, Retrieved, UpsertOutcome, Vector
    from neural_memory.search.filters.model import Filter
    from neural_memory.stores.find import Find


# The record fields ``restate`` sets in place: the tier lifecycle's, on which no chunk's text or
# vector depends (a change of those is a new upsert).
LIFECYCLE_FIELDS = frozenset(
    {"tier", "expires_at", "promoted_at", "promoted_by", "promotion_reason", "citations", "archived_at"}
)

# The record fields ``patch`` sets: marks no chunk's text or vector, nor the embedded store's
# in-memory mirror, depends on (that store reads them at search time from partial indices).
PATCHED_FIELDS = frozenset({"superseded_by", "possibly_stale", "stale_at"})


def lifecycle_state(record: ObservationRecord | None) -> tuple[object, ...] | None:
    """What the lifecycle operations (promote, cite, archive, embed, supersede) change on a stored
    record: an ingest that carried these over writes only if the store still holds them."""
    if record is None:
        return None
    return (
        record.tier,
        record.expires_at,
        record.promoted_at,
        record.promoted_by,
        record.promotion_reason,
        record.citations,
        record.archived_at,
        record.embedded_at,
        record.superseded_by,
    )


class RecordChanged(Exception):
    """A conditional write found the record changed since it was read; ``record`` is it now."""

    def __init__(self, record: ObservationRecord) -> None:
        super().__init__(f"observation {record.id!r} changed since it was read")
        self.record = record


class Recurrence(DomainModel):
    """How many observations of a workspace hold one recurrence key, and the ids of those of them
    not embedded yet (at most the ``limit`` asked for, the earliest first)."""

    count: int
    unembedded: list[str]


class IndexedObservation(DomainModel):
    """A record with its chunks, ready to write; ``model_id`` names the space of the chunk vectors."""

    record: ObservationRecord
    chunks: list[Chunk]
    model_id: str | None = None


# The observation types that state something about code, and so can go stale (``possibly_stale``)
# when a later push touches what they name. Events (pushes, deployments, CI runs, merged pull
# requests) record what happened: they cannot.
CLAIM_TYPES = ("adr", "decision", "design_note", "note")


def touches_code(record: ObservationRecord) -> bool:
    """Whether the record's code refs are code it changed (an event: written with every tail of
    each path, ``metadata_terms``'s ``suffixes``) rather than code it names (a claim: matched as
    named)."""
    return record.observation_type not in CLAIM_TYPES


class Store(Protocol):
    """Observations of many workspaces, searchable lexically and by vector."""

    def upsert(
        self,
        workspace_id: str,
        items: Sequence[IndexedObservation],
        expected: Mapping[str, tuple[object, ...] | None] | None = None,
    ) -> UpsertOutcome:
        """Insert or replace each observation (and its chunks) in one batch. With ``expected``
        (by id, the ``lifecycle_state`` the caller read, None for absent), an item whose
        stored state is no longer that is not written but listed in ``stale`` (checked and
        written atomically: in the write's transaction, or conditionally on chunk 0's version)."""
        ...

    def embed_stored(self, workspace_id: str, items: Sequence[IndexedObservation]) -> list[str]:
        """Give stored observations these chunks (with vectors) and ``embedded_at``, leaving every
        other field as stored, only while their ``content_hash`` is the item's and they are not
        embedded yet (checked atomically with the write); returns the ids written."""
        ...

    def get(self, workspace_id: str, observation_id: str) -> ObservationRecord | None:
        """The observation, or None if it is not in this workspace."""
        ...

    def get_many(self, workspace_id: str, observation_ids: Sequence[str]) -> dict[str, ObservationRecord]:
        """The observations of this workspace among ``observation_ids``, by id (one read)."""
        ...

    def find(self, workspace_id: str, query: Find) -> list[ObservationRecord]:
        """The records of the workspace ``query`` matches (no condition: every one, expired,
        archived and superseded included), by ``occurred_at`` then ``id``, oldest first unless
        ``query.newest_first``, at most ``query.limit``."""
        ...

    def delete(self, workspace_id: str, observation_id: str) -> bool:
        """Delete the observation and its chunks; False if it was not in this workspace."""
        ...

    def retrieve(
        self,
        workspace_id: str,
        *,
        text: str | None,
        vector: Vector | None,
        model_id: str | None,
        flt: Filter,
        limit: int,
    ) -> Retrieved:
        """Up to ``limit`` chunk hits per retriever: lexical if ``text``, vector if ``vector``
        (compared only with chunks embedded by ``model_id``), both under the same filter."""
        ...

    def chunk_vectors(
        self, workspace_id: str, model_id: str, chunks: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], Sequence[float]]:
        """The vectors ``model_id`` made of these (observation id, chunk number) chunks of the
        workspace; chunks without one (E tier, another model) are absent."""
        ...

    def facets(self, workspace_id: str, flt: Filter, limit: int) -> FacetCounts:
        """How many live observations of the workspace hold each value of every list field
        (``filters.LIST_FIELDS``), counted under ``flt`` without that field's own conditions
        (``filters.without_field``), the most frequent first (ties by value), at most ``limit``
        per field; and how many match all of ``flt``. Reads the list conditions, their
        exclusions, the date range, TTL and supersession of ``flt`` (facets take nothing else)."""
        ...

    def patch(self, workspace_id: str, changes: Mapping[str, Mapping[str, object]]) -> None:
        """Set these ``PATCHED_FIELDS`` of these observations (by id: field -> value, None
        clears one) on every chunk that carries them; absent ids are skipped."""
        ...

    def expiring_links(self, now: datetime) -> dict[str, list[str]]:
        """By workspace, the ids superseded by observations that expired at or before ``now``
        (what a purge at ``now`` will release)."""
        ...

    def purge_expired(self, now: datetime) -> int:
        """Delete every observation (of every workspace) that expired at or before ``now``, with
        its chunks; returns how many. Queries already hide them: this reclaims the space."""
        ...

    def restate(
        self,
        workspace_id: str,
        observation_id: str,
        fields: Mapping[str, object],
        expected: Mapping[str, object] | None = None,
    ) -> ObservationRecord | None:
        """Set these ``LIFECYCLE_FIELDS`` of the observation in place (every chunk of it: a
        promotion); the record as it now stands, or None if it is not in this workspace. With
        ``expected`` (field -> value), only if the stored record still holds those values,
        checked atomically with the write, else ``RecordChanged`` with the record as it is."""
        ...

    def note_citations(self, workspace_id: str, observation_ids: Sequence[str]) -> dict[str, int]:
        """Count one more answer citing each of these observations; their counts now, by id
        (absent ids are skipped)."""
        ...

    def recurrences(self, workspace_id: str, keys: Sequence[str], limit: int) -> dict[str, Recurrence]:
        """For each of ``keys`` that stored observations hold as ``recurrence_key``, how many do
        and which of them are not embedded yet (see ``Recurrence``); keys nobody holds are absent."""
        ...

    def vectors_due(self, now: datetime, limit: int) -> dict[str, list[str]]:
        """By workspace, the ids of observations (of every workspace, at most ``limit``) whose
        chunks still hold vectors they no longer should at ``now`` (``tiers.embeds``): C whose
        window ended at or before ``now``, and archived E."""
        ...

    def archive_execution(self, occurred_before: datetime, now: datetime) -> int:
        """Mark ``archived_at = now`` on every E observation (of every workspace) that occurred at
        or before ``occurred_before`` and is not archived yet; returns how many."""
        ...

    def count(self, workspace_id: str) -> int:
        """How many observations the workspace holds (expired ones included until purged)."""
        ...
