"""What a feature asks a store for when it reads records by their fields (``Store.find``).

``Find`` is to records what ``search/filters/model.Filter`` is to retrieval: pure data, rendered
once by each store in its own dialect (SQL: ``stores/sqlite/find.py``; the query DSL:
``stores/opensearch/dsl.py``), so a feature written over it exists once, above the port
(CONTRIBUTING.md, "Stores: the port"). A condition a feature needs and ``Find`` cannot say yet is
added here, to each renderer, and to the conformance suite's ``find`` cases.

A ``Find`` with no condition matches every record of the workspace: expired (until purged),
archived and superseded ones included. Records come in (``occurred_at``, ``id``) order, oldest
first unless ``newest_first``, so a ``limit`` cuts the same records on every store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from neural_memory.domain.filters import MetadataScalar


@dataclass(frozen=True, slots=True)
class Find:
    """Conditions on records, their order and how many to return (None: all)."""

    # The records of this session only.
    session_id: str | None = None
    # Records that occurred strictly before this moment.
    occurred_before: datetime | None = None
    # Records whose ``supersedes`` names one of these ids.
    supersedes_any: tuple[str, ...] = ()
    # Records whose metadata holds every (key, value) pair of at least one of these groups,
    # exactly as metadata filters match (``metadata_term``); each group's first pair is its most
    # selective (a store may start from it). An empty group matches nothing.
    metadata_any: tuple[tuple[tuple[str, MetadataScalar], ...], ...] = ()
    # Records not expired at this moment (``expires_at`` unset or after it).
    live_at: datetime | None = None
    # Records whose ``code_refs`` hold one of these (``repository:path``), matched as each store
    # indexes them (``code_ref_term``: an event's every tail of a path, a claim's path as named).
    code_refs: tuple[str, ...] = ()
    # Records that occurred strictly after this moment.
    occurred_after: datetime | None = None
    # Records of these sources / observation types only.
    sources: tuple[str, ...] = ()
    observation_types: tuple[str, ...] = ()
    # Records not marked possibly stale, or marked by a push that occurred at or after this moment
    # (``stale_at``; a mark without one counts as such).
    marked_from: datetime | None = None
    # Records of these tiers only.
    tiers: tuple[str, ...] = ()
    # Records that occurred at or before this moment.
    occurred_by: datetime | None = None
    # Records that expired at or before this moment (``expires_at`` set and not after it): what a
    # purge at this moment deletes.
    expired_at: datetime | None = None
    # Records archived (True) or not (False); None: either.
    archived: bool | None = None
    # Records embedded by their recurrence (``embedded_at`` set: True) or not (False); None: either.
    embedded: bool | None = None
    # Records whose ``recurrence_key`` is one of these.
    recurrence_keys: tuple[str, ...] = ()
    # Records that supersede others (``supersedes`` set).
    superseding: bool = False
    # Records with a chunk still holding a vector (a condition on records only: ``find`` and
    # ``count``, not ``patch`` or ``delete`` by a ``Find``).
    holding_vectors: bool = False
    newest_first: bool = False
    limit: int | None = None


# What ``Store.count`` may count by: the workspace (the one question asked across workspaces, by
# maintenance: where it has work) and the recurrence key (how often a content occurred).
COUNTED_BY = frozenset({"workspace_id", "recurrence_key"})


@dataclass(frozen=True, slots=True)
class Matching:
    """One set of field values for every record a ``Find`` matches (``Store.patch``'s target when
    it is not a list of ids: maintenance's archive)."""

    find: Find
    fields: Mapping[str, object]


def check_count(workspace_id: str | None, by: str | None) -> None:
    """``ValueError`` for a count the port does not ask: by a field not in ``COUNTED_BY``, or
    across workspaces by anything but ``workspace_id``."""
    if by is not None and by not in COUNTED_BY:
        raise ValueError(f"count by one of {sorted(COUNTED_BY)}, not {by!r}")
    if workspace_id is None and by != "workspace_id":
        raise ValueError("only a count by workspace_id is asked across workspaces")


def check_target(query: Find) -> None:
    """``ValueError`` for a ``Find`` a ``patch`` or ``delete`` cannot take: ``holding_vectors``
    is a condition on records (their chunks' vectors), for ``find`` and ``count`` only."""
    if query.holding_vectors:
        raise ValueError("holding_vectors is a condition on records: find and count only")
