"""The facets' contract: ``GET /v1/facets``, counts per value of each filterable field."""

from __future__ import annotations

from pydantic import Field

from neural_memory.models.search import Latency
from neural_memory.models.wire import WireModel


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
