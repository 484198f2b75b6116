"""The filters of a search, an answer, the facets and the engineering views, as clients send them
(``filters``): groups of conditions, their exclusions and time bounds."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, Field, StrictBool, model_validator

from neural_memory.models.types import (
    MAX_FILTER_GROUPS,
    MAX_FILTER_VALUES,
    ActorList,
    MetadataKey,
    MetadataValue,
    SlugList,
    TierList,
    Timestamp,
)
from neural_memory.models.wire import RequestModel


class DateRange(RequestModel):
    """Bounds on ``occurredAt``; both ends inclusive, either optional."""

    start: Timestamp | None = None
    end: Timestamp | None = None

    @model_validator(mode="after")
    def _start_not_after_end(self) -> DateRange:
        if self.start is not None and self.end is not None and self.start > self.end:
            raise ValueError("dateRange.start must not be after dateRange.end")
        return self


# One name for a record's field and its filter: `source` is filtered by `sources`. `sourceTypes`,
# the name it had first, stays accepted (every client, bookmark and console URL has it); sending
# both is a 400 (the second is an unknown field). Replies keep writing `sourceTypes` until a
# major version, so no reader breaks. A record's `sourceType` is something else: the source's
# own kind of event (push, pull_request, deployment), filtered through `observationTypes`.
_SOURCES = AliasChoices("sources", "sourceTypes")
_ACTORS = AliasChoices("actors", "actorNames")
_ACTORS_DESCRIPTION = "Observations whose `actorName` is one of these. Also accepted as `actorNames` (not both)."
_SOURCES_DESCRIPTION = (
    "Observations whose `source` is one of these (github, vercel, manual, agent...). Also accepted under its "
    "first name, `sourceTypes` (not both)."
)


class ExcludedValues(RequestModel):
    """Values an observation must not have (``filters.not``): any listed value excludes it."""

    source_types: SlugList | None = Field(default=None, validation_alias=_SOURCES, description=_SOURCES_DESCRIPTION)
    observation_types: SlugList | None = None
    actor_names: ActorList | None = Field(default=None, validation_alias=_ACTORS, description=_ACTORS_DESCRIPTION)
    tiers: TierList | None = None


class FilterGroup(RequestModel):
    """Conditions combined with AND; the values inside one list are combined with OR; ``not``
    excludes observations having any of its values (a field may be both included and excluded:
    ``sourceTypes: [github, vercel], not: {sourceTypes: [vercel]}`` keeps github); ``metadata``
    keeps observations whose metadata has each key at exactly that value (a string, number or
    boolean of the same type: ``true`` is not ``1``)."""

    source_types: SlugList | None = Field(default=None, validation_alias=_SOURCES, description=_SOURCES_DESCRIPTION)
    observation_types: SlugList | None = None
    actor_names: ActorList | None = Field(default=None, validation_alias=_ACTORS, description=_ACTORS_DESCRIPTION)
    tiers: TierList | None = None
    created_by: ActorList | None = Field(
        default=None, description="Observations written by one of these keys (their names: `createdBy`)"
    )
    date_range: DateRange | None = None
    excluded: ExcludedValues | None = Field(default=None, alias="not")
    metadata: Annotated[dict[MetadataKey, MetadataValue], Field(min_length=1, max_length=MAX_FILTER_VALUES)] | None = (
        None
    )


class SearchFilters(FilterGroup):
    """The filter groups' conditions at the top level, and ``anyOf``: at least one of these groups
    must match as well (an OR of ANDs; a group holds no ``anyOf`` of its own)."""

    any_of: Annotated[list[FilterGroup], Field(min_length=1, max_length=MAX_FILTER_GROUPS)] | None = None
    fresh: StrictBool | None = Field(
        default=None,
        description="true: leave out observations marked `possiblyStale` (a later change touched their code); "
        "false: only those (what went stale).",
    )
    trust: Annotated[list[Literal["team", "outside"]], Field(min_length=1, max_length=2)] | None = Field(
        default=None,
        description="Observations written by the team or from outside it (`trust`: from the provenance its source "
        "gave, `metadata.authorAssociation`, and the workspace's team policy). One stored before provenance has "
        "neither.",
    )
    flagged: StrictBool | None = Field(
        default=None,
        description="true: only observations flagged for review (`flags`: instruction-like or hidden text); "
        "false: none of them.",
    )
