"""The facets' contract: ``GET /v1/facets``, counts per value of each filterable field; its query
string read as ``SearchFilters`` (``facet_filters``) and a store's counts as its reply
(``facets_reply``: the store counts, ``Store.facets``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from neural_memory.errors import InvalidInput
from neural_memory.models.filters import DateRange, SearchFilters
from neural_memory.models.search import Latency
from neural_memory.models.wire import WireModel

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from neural_memory.models.records import FacetCounts
    from neural_memory.models.types import Tier

DEFAULT_FACET_VALUES = 20
MAX_FACET_VALUES = 100


class FacetCount(WireModel):
    """One value of a field and how many observations hold it."""

    value: str
    count: int


_OLD_NAME = "The same counts under the name this key had first, kept for a release: read `{}`."


class Facets(WireModel):
    """Counts per value of each filterable field, the most frequent first, each under the name of
    the filter it feeds (``sources``, ``observationTypes``, ``actors``, ``tiers``). Each field is
    counted under every filter except its own, so a chosen value's alternatives keep their counts."""

    sources: list[FacetCount]
    observation_types: list[FacetCount]
    actors: list[FacetCount]
    tiers: list[FacetCount]
    source_types: list[FacetCount] = Field(description=_OLD_NAME.format("sources"), deprecated=True)
    actor_names: list[FacetCount] = Field(description=_OLD_NAME.format("actors"), deprecated=True)


class FacetsResponse(WireModel):
    """Reply of ``GET /v1/facets``."""

    request_id: str
    total: int = Field(description="Observations of the workspace matching every filter given (all of them if none).")
    facets: Facets
    latency: Latency = Field(description="Counting is `retrieval`; no other stage runs.")
    degraded: list[str] = Field(default_factory=list)


def facet_filters(
    *,
    sources: Sequence[str] | None = None,
    source_types: Sequence[str] | None = None,
    observation_types: Sequence[str] | None = None,
    actor_names: Sequence[str] | None = None,
    tiers: Sequence[Tier] | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    actors: Sequence[str] | None = None,
) -> SearchFilters | None:
    """The filters of the query string (each value already validated), None when there are none;
    ``InvalidInput`` naming ``start`` when it is after ``end``. ``sources`` and ``source_types``
    (``sourceTypes``, its first name) are one filter: give either, not both; so are ``actors`` and
    ``actor_names`` (``actorNames``)."""
    if sources and source_types:
        raise InvalidInput("sourceTypes", "the same filter as sources, under its first name: give one of them")
    if actors and actor_names:
        raise InvalidInput("actorNames", "the same filter as actors, under its first name: give one of them")
    source_types = sources or source_types
    actor_names = actors or actor_names
    if start is not None and end is not None and start > end:
        raise InvalidInput("start", "must not be after end")
    date_range = DateRange.model_construct(start=start, end=end) if start or end else None
    if not (source_types or observation_types or actor_names or tiers or date_range):
        return None
    return SearchFilters.model_construct(
        source_types=list(source_types or ()) or None,
        observation_types=list(observation_types or ()) or None,
        actor_names=list(actor_names or ()) or None,
        tiers=list(tiers or ()) or None,
        date_range=date_range,
    )


# Wire name of each stored list field (as ``SearchFilters`` names them).
_WIRE_NAMES = {
    "source": "source_types",
    "observation_type": "observation_types",
    "actor_name": "actor_names",
    "tier": "tiers",
}


def facets_reply(counts: FacetCounts, request_id: str, latency: Latency) -> FacetsResponse:
    """The store's counts under their wire names."""
    fields = {
        _WIRE_NAMES[field]: [FacetCount(value=value, count=count) for value, count in pairs]
        for field, pairs in counts.by_field.items()
    }
    fields |= {"sources": fields.get("source_types", []), "actors": fields.get("actor_names", [])}
    return FacetsResponse(request_id=request_id, total=counts.total, facets=Facets(**fields), latency=latency)
