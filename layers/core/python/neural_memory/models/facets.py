"""The facets' contract: ``GET /v1/facets``, counts per value of each filterable field."""

from __future__ import annotations

from pydantic import Field

from neural_memory.models.search import Latency
from neural_memory.models.wire import WireModel


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
