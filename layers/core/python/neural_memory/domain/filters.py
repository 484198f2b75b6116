"""Filters are pure data: ``SearchFilters`` (validated at the edge) compiles into one neutral
``Filter``, which each store renders in its own dialect: the OpenSearch query DSL
(``stores/opensearch/dsl.py``), the embedded store's SQL and in-memory mask (``stores/sqlite/``).
The workspace is never part of a ``Filter``: stores take it as a required argument and add it
themselves.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from neural_memory.domain.text_refs import suffixes as ref_tails
from neural_memory.models import MAX_EXACT_INTEGER, MAX_METADATA_VALUE_CHARS

MetadataScalar = bool | int | float | str

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from neural_memory.models import FilterGroup, SearchFilters


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
    # Metadata keys that must hold exactly these values (type included: True is not 1).
    metadata: tuple[tuple[str, MetadataScalar], ...] = ()
    # Written by one of these keys (``createdBy``: the key's name, set by the server). Apart from
    # the list fields: no facet counts it, and the embedded store reads it from its rows
    # (``RowLookup.created_by``), not from the in-memory mirror.
    created_by: tuple[str, ...] = ()
    # Written by the team or from outside (the stored ``trust``, ``trust/team.py``): a list field
    # of the top level only, counted by no facet.
    trusts: tuple[str, ...] = ()
    # True (``filters.flagged: true``): only records flagged for review (``flags`` set); False: none.
    flagged: bool | None = None
    # At least one of these must match too (``anyOf``); a group uses only the conditions above
    # from ``sources`` to ``metadata`` (no TTL, session or groups of its own).
    any_of: tuple[Filter, ...] = ()
    # False: records another one supersedes (``superseded_by`` set) are not retrieved.
    include_superseded: bool = False
    # True (``filters.fresh: true``): records marked ``possibly_stale`` are not retrieved.
    fresh_only: bool = False
    # True (``filters.fresh: false``): only records marked ``possibly_stale`` are retrieved.
    stale_only: bool = False
    # False: records the maintenance archived (``archived_at`` set) are not retrieved (a search
    # includes them unless the client says ``includeArchived: false``).
    include_archived: bool = False

    def terms(self) -> list[tuple[str, tuple[str, ...]]]:
        """The exact-match conditions as (stored field, allowed values), only those that are set.

        Every store renders these from here, so a new filter field is added in one place.
        """
        listed = _set(self.sources, self.observation_types, self.actor_names, self.tiers)
        return [*listed, ("trust", self.trusts)] if self.trusts else listed

    def excluded_terms(self) -> list[tuple[str, tuple[str, ...]]]:
        """The exclusions (``filters.not``) as (stored field, excluded values), only those set; a
        record with no value in that field is never excluded by it."""
        return _set(self.not_sources, self.not_observation_types, self.not_actor_names, self.not_tiers)


# The stored fields of the list filters, in the order ``_set`` receives their values.
LIST_FIELDS = ("source", "observation_type", "actor_name", "tier")


def _set(*values: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """(stored field, values) of each list filter given values (in ``LIST_FIELDS`` order)."""
    return [(name, given) for name, given in zip(LIST_FIELDS, values, strict=True) if given]


def without_field(flt: Filter, field: str) -> Filter:
    """``flt`` without the conditions (included and excluded values) on one list field: what a
    facet of that field counts under, so choosing a value leaves its alternatives their counts."""
    if field == "source":
        return replace(flt, sources=(), not_sources=())
    if field == "observation_type":
        return replace(flt, observation_types=(), not_observation_types=())
    if field == "actor_name":
        return replace(flt, actor_names=(), not_actor_names=())
    if field == "tier":
        return replace(flt, tiers=(), not_tiers=())
    raise ValueError(f"not a list field: {field}")


def compile_filter(
    filters: SearchFilters | None,
    *,
    live_at: datetime,
    exclude_session_id: str | None,
    exclude_after: datetime | None = None,
    include_superseded: bool = False,
    include_archived: bool = False,
) -> Filter:
    """Turn the validated API filters into the neutral ``Filter`` (duplicates removed, order kept)."""
    rules = Filter(
        live_at=live_at,
        exclude_session_id=exclude_session_id,
        exclude_after=exclude_after,
        include_superseded=include_superseded,
        include_archived=include_archived,
    )
    if filters is None:
        return rules
    groups = tuple(_conditions(Filter(live_at=live_at), group) for group in filters.any_of or ())
    return replace(
        _conditions(rules, filters),
        any_of=groups,
        fresh_only=filters.fresh is True,
        stale_only=filters.fresh is False,
        trusts=_unique(filters.trust),
        flagged=filters.flagged,
    )


def _conditions(base: Filter, group: FilterGroup) -> Filter:
    """``base`` with the conditions of one filter group."""
    date_range = group.date_range
    excluded = group.excluded
    return replace(
        base,
        sources=_unique(group.source_types),
        observation_types=_unique(group.observation_types),
        actor_names=_unique(group.actor_names),
        tiers=_unique(group.tiers),
        occurred_from=date_range.start if date_range else None,
        occurred_to=date_range.end if date_range else None,
        not_sources=_unique(excluded.source_types) if excluded else (),
        not_observation_types=_unique(excluded.observation_types) if excluded else (),
        not_actor_names=_unique(excluded.actor_names) if excluded else (),
        not_tiers=_unique(excluded.tiers) if excluded else (),
        metadata=tuple((group.metadata or {}).items()),
        created_by=_unique(group.created_by),
    )


def _unique(values: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values or ()))


def metadata_term(key: str, value: MetadataScalar) -> str:
    """One metadata pair as an exact keyword, typed so ``"1"``, ``1`` and ``true`` stay apart and
    ``1`` equals ``1.0`` (OpenSearch indexes these beside each document: ``metadata_terms``)."""
    if isinstance(value, bool):
        typed = f"b:{str(value).lower()}"
    elif isinstance(value, int | float):
        typed = f"n:{float(value) + 0.0!r}"  # + 0.0: -0.0 is 0, as SQLite compares them
    else:
        typed = f"s:{value}"
    return f"{json.dumps(key)}={typed}"  # the key quoted: "a=s:x" cannot pose as key a with x=...


def code_ref_term(ref: str) -> str:
    """A code ref (``repository:path``) as an exact keyword stored beside the metadata terms (a
    metadata term starts with a quote, so the two never meet)."""
    return f"code:{ref}"


def metadata_terms(
    metadata: dict[str, Any], code_refs: Sequence[str] | None = None, *, suffixes: bool = False
) -> list[str]:
    """``metadata_term`` of every top-level key holding a string, number or boolean, and
    ``code_ref_term`` of each code ref (with ``suffixes``, of each tail of its path too: an event
    touching code, which a claim may name by a tail, ``engineering.text_refs``). A string longer
    than a filter value may be is left out: no filter can match it, and OpenSearch refuses a
    keyword over 32,766 bytes (the whole document with it)."""
    terms = [metadata_term(key, value) for key, value in metadata.items() if _filterable(value)]
    refs = [*(code_refs or ()), *(ref_tails(code_refs) if suffixes and code_refs else ())]
    return terms + [code_ref_term(ref) for ref in refs]


def _filterable(value: object) -> bool:
    """Whether a filter could ask for this value (others are not indexed: none can match)."""
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return abs(value) <= MAX_EXACT_INTEGER
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str) and len(value) <= MAX_METADATA_VALUE_CHARS


def filter_fields(filters: SearchFilters | None) -> list[str]:
    """The names of the fields a request filters on, never their values (for logs): ``not.`` and
    ``anyOf.`` prefix the fields of those groups; metadata is ``metadata``, without its keys."""
    if filters is None:
        return []
    names: set[str] = set()
    groups: list[tuple[str, FilterGroup]] = [("", filters), *(("anyOf.", g) for g in filters.any_of or [])]
    for prefix, group in groups:
        for name, value in group.model_dump(by_alias=True, exclude_none=True, exclude={"any_of"}).items():
            if name == "not":
                names.update(f"{prefix}not.{field}" for field in value)
            else:
                names.add(f"{prefix}{name}")
    return sorted(names)
