"""Filters are pure data: ``SearchFilters`` (validated at the edge) compiles into one neutral
``Filter``, which each store renders: ``render_opensearch`` here, and the embedded store's
in-memory mask (``ChunkMirror.mask``). The workspace is never part of a ``Filter``: stores take
it as a required argument and add it themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neural_memory.clock import to_iso

if TYPE_CHECKING:
    from datetime import datetime

    from neural_memory.models import SearchFilters


@dataclass(frozen=True, slots=True)
class Filter:
    """Conditions a record must meet to be retrieved; empty tuples mean "any".

    ``live_at`` excludes records that expired at or before that moment (TTL is enforced at
    query time, whatever the purge has or has not deleted yet).
    """

    live_at: datetime
    sources: tuple[str, ...] = ()
    observation_types: tuple[str, ...] = ()
    actor_names: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    occurred_from: datetime | None = None
    occurred_to: datetime | None = None
    exclude_session_id: str | None = None
    not_sources: tuple[str, ...] = ()
    not_observation_types: tuple[str, ...] = ()
    not_actor_names: tuple[str, ...] = ()
    not_tiers: tuple[str, ...] = ()
    # With ``exclude_session_id``: only that session's records after this moment are excluded
    # (the compact boundary: what an agent has lost from its context stays findable).
    exclude_after: datetime | None = None

    def terms(self) -> list[tuple[str, tuple[str, ...]]]:
        """The exact-match conditions as (stored field, allowed values), only those that are set.

        Every store renders these from here, so a new filter field is added in one place.
        """
        pairs = (
            ("source", self.sources),
            ("observation_type", self.observation_types),
            ("actor_name", self.actor_names),
            ("tier", self.tiers),
        )
        return [(name, values) for name, values in pairs if values]

    def excluded_terms(self) -> list[tuple[str, tuple[str, ...]]]:
        """The exclusions (``filters.not``) as (stored field, excluded values), only those set; a
        record with no value in that field is never excluded by it."""
        pairs = (
            ("source", self.not_sources),
            ("observation_type", self.not_observation_types),
            ("actor_name", self.not_actor_names),
            ("tier", self.not_tiers),
        )
        return [(name, values) for name, values in pairs if values]


def compile_filter(
    filters: SearchFilters | None,
    *,
    live_at: datetime,
    exclude_session_id: str | None,
    exclude_after: datetime | None = None,
) -> Filter:
    """Turn the validated API filters into the neutral ``Filter`` (duplicates removed, order kept)."""
    if filters is None:
        return Filter(live_at=live_at, exclude_session_id=exclude_session_id, exclude_after=exclude_after)
    date_range = filters.date_range
    excluded = filters.excluded
    return Filter(
        live_at=live_at,
        sources=tuple(dict.fromkeys(filters.source_types or ())),
        observation_types=tuple(dict.fromkeys(filters.observation_types or ())),
        actor_names=tuple(dict.fromkeys(filters.actor_names or ())),
        tiers=tuple(dict.fromkeys(filters.tiers or ())),
        occurred_from=date_range.start if date_range else None,
        occurred_to=date_range.end if date_range else None,
        exclude_session_id=exclude_session_id,
        exclude_after=exclude_after,
        not_sources=tuple(dict.fromkeys(excluded.source_types or ())) if excluded else (),
        not_observation_types=tuple(dict.fromkeys(excluded.observation_types or ())) if excluded else (),
        not_actor_names=tuple(dict.fromkeys(excluded.actor_names or ())) if excluded else (),
        not_tiers=tuple(dict.fromkeys(excluded.tiers or ())) if excluded else (),
    )


def render_opensearch(flt: Filter) -> list[dict[str, Any]]:
    """OpenSearch ``bool.filter`` clauses for ``flt`` (terms, ranges, the TTL and session rules).

    The same list goes into the lexical query's ``bool.filter`` and inside the ``knn`` clause's
    ``filter`` (efficient filtering), so both retrievers see exactly the same records.
    """
    clauses: list[dict[str, Any]] = [
        {
            "bool": {
                "should": [
                    {"bool": {"must_not": [{"exists": {"field": "expires_at"}}]}},
                    {"range": {"expires_at": {"gt": to_iso(flt.live_at)}}},
                ],
                "minimum_should_match": 1,
            }
        }
    ]
    clauses.extend({"terms": {field: list(values)}} for field, values in flt.terms())
    clauses.extend({"bool": {"must_not": [{"terms": {field: list(values)}}]}} for field, values in flt.excluded_terms())
    bounds: dict[str, str] = {}
    if flt.occurred_from is not None:
        bounds["gte"] = to_iso(flt.occurred_from)
    if flt.occurred_to is not None:
        bounds["lte"] = to_iso(flt.occurred_to)
    if bounds:
        clauses.append({"range": {"occurred_at": bounds}})
    if flt.exclude_session_id is not None and flt.exclude_after is None:
        clauses.append({"bool": {"must_not": [{"term": {"session_id": flt.exclude_session_id}}]}})
    elif flt.exclude_session_id is not None and flt.exclude_after is not None:
        later = [
            {"term": {"session_id": flt.exclude_session_id}},
            {"range": {"occurred_at": {"gt": to_iso(flt.exclude_after)}}},
        ]
        clauses.append({"bool": {"must_not": [{"bool": {"filter": later}}]}})
    return clauses
