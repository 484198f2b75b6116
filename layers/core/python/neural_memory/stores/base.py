"""The store protocol both backends implement: a port of nine primitives (CONTRIBUTING.md, "Stores:
the port"), with every feature written once above it, in the folder of its role, as a function of
them: ``write``, ``read`` (``read_one``: a read of one), ``find`` and ``count`` (records by a
``stores/find.Find``), ``patch``, ``delete``, and the retrieval primitives ``retrieve``,
``chunk_vectors`` and ``facets``.

Contract for every implementation:
- ``workspace_id`` is a required argument of every method and is part of every query; no
  method can read, search or delete across workspaces. The one question asked across them is
  ``count(None, query, by="workspace_id")``: which workspaces maintenance has work in.
- Scores in ``Retrieved`` are in [0, 1], higher is better: ``vector`` hits carry cosine
  similarity clipped to [0, 1] (vectors are unit length), ``lexical`` hits carry BM25 divided by
  the best BM25 of the same query (so the best lexical hit scores 1.0).
- Records whose ``expires_at`` is at or before ``Filter.live_at`` are never returned (the
  service passes a ``live_at`` that hides nothing unless expired C observations are deleted);
  archived ones (``archived_at`` set) only with ``Filter.include_archived``.
- A write is idempotent: the same (workspace, id) replaces the record and all its chunks.
- A conditional write (``expected``) is checked and made as one step: in the write's transaction,
  or conditionally on the version of chunk 0 (the record).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, overload

from neural_memory.domain.record_rules import PATCHED_FIELDS
from neural_memory.models import Chunk, DomainModel, ObservationRecord

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from neural_memory.domain.filters import Filter
    from neural_memory.models import FacetCounts, Retrieved, UpsertOutcome, Vector
    from neural_memory.stores.find import Find, Matching


def holds(record: ObservationRecord | None, expected: Mapping[str, object] | None) -> bool:
    """Whether a stored record (None: absent) is as ``expected`` (field -> value; None: absent)."""
    if expected is None or record is None:
        return expected is None and record is None
    return all(getattr(record, name) == value for name, value in expected.items())


def check_patched(fields: Mapping[str, object]) -> None:
    """``ValueError`` for fields a ``patch`` does not set (not ``PATCHED_FIELDS``)."""
    if not set(fields) <= PATCHED_FIELDS:
        raise ValueError(f"patch sets only {sorted(PATCHED_FIELDS)}, not {sorted(set(fields))}")


class RecordChanged(Exception):
    """A conditional write found the record changed since it was read; ``record`` is it now."""

    def __init__(self, record: ObservationRecord) -> None:
        super().__init__(f"observation {record.id!r} changed since it was read")
        self.record = record


@dataclass
class Patched:
    """What a ``patch`` did: the ids it wrote, and those whose stored record no longer held the
    values ``expected``, as they now stand (not written)."""

    ids: list[str] = field(default_factory=list)
    changed: dict[str, ObservationRecord] = field(default_factory=dict)


class IndexedObservation(DomainModel):
    """A record with its chunks, ready to write; ``model_id`` names the space of the chunk vectors."""

    record: ObservationRecord
    chunks: list[Chunk]
    model_id: str | None = None


def read_one(store: Store, workspace_id: str, observation_id: str) -> ObservationRecord | None:
    """The observation, or None if it is not in this workspace (``Store.read`` of one id)."""
    return store.read(workspace_id, [observation_id]).get(observation_id)


class Store(Protocol):
    """Observations of many workspaces, searchable lexically and by vector."""

    def write(
        self,
        workspace_id: str,
        items: Sequence[IndexedObservation],
        expected: Mapping[str, Mapping[str, object] | None] | None = None,
    ) -> UpsertOutcome:
        """Insert or replace each observation (and its chunks) in one batch. With ``expected``
        (by id: field -> value the caller read, such as its ``lifecycle_state``; None for
        absent), an item whose stored record no longer ``holds`` that is not written but listed
        in ``stale`` (checked and written atomically: in the write's transaction, or
        conditionally on chunk 0's version)."""
        ...

    def read(self, workspace_id: str, observation_ids: Sequence[str]) -> dict[str, ObservationRecord]:
        """The observations of this workspace among ``observation_ids``, by id (one read; one
        record: ``read_one``)."""
        ...

    def find(self, workspace_id: str, query: Find) -> list[ObservationRecord]:
        """The records of the workspace ``query`` matches (no condition: every one, expired,
        archived and superseded included), by ``occurred_at`` then ``id``, oldest first unless
        ``query.newest_first``, at most ``query.limit``."""
        ...

    @overload
    def delete(self, workspace_id: str, target: str) -> bool: ...

    @overload
    def delete(self, workspace_id: str, target: Find) -> int: ...

    def delete(self, workspace_id: str, target: str | Find) -> bool | int:
        """Delete the observation named by id, or every record a ``Find`` matches (a condition
        on records: not ``holding_vectors``), with their chunks: whether the one named by id was
        in this workspace, or how many a ``Find`` matched."""
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

    def patch(
        self,
        workspace_id: str,
        changes: Mapping[str, Mapping[str, object]] | Matching,
        expected: Mapping[str, Mapping[str, object]] | None = None,
    ) -> Patched:
        """Set ``PATCHED_FIELDS`` (None clears one) on every chunk of these observations: by id
        (field -> value; absent ids are skipped), or one set of fields on every record a
        ``Matching`` finds. With ``expected`` (by id: field -> value), an id whose stored record
        no longer holds those values is not written but returned in ``changed`` as it now stands
        (checked and written as one step: in the write's transaction, or conditionally on chunk
        0's version)."""
        ...

    @overload
    def count(self, workspace_id: str, query: Find | None = None) -> int: ...

    @overload
    def count(self, workspace_id: str | None, query: Find | None = None, *, by: str) -> dict[str, int]: ...

    def count(
        self, workspace_id: str | None, query: Find | None = None, *, by: str | None = None
    ) -> int | dict[str, int]:
        """How many records of the workspace ``query`` matches (None: all of them, expired ones
        included until purged); with ``by`` (``COUNTED_BY``), by their value of that field
        (records without one are not counted). ``workspace_id`` None counts across workspaces,
        only by ``workspace_id``: which workspaces maintenance has work in."""
        ...
