"""The LLM half of ``autoFilters``: one forced tool call turns a query into filters, constrained to
the values the workspace holds ("what did alice push last week" → ``actorNames: [alice]``,
``observationTypes: [push]``, last week's dates).

The tool's schema lists the workspace's sources, observation types and actors as enums, and the
reply is checked again here: a value the workspace does not hold is dropped, never searched (the
model cannot invent an actor), dates must carry a zone and be in order, and the query text left
must not be empty. Any failure raises ``InferenceFailed``; the pipeline then uses the offline
time phrases and names the failure in ``degraded``. The call goes through an ``LlmProvider``
(Claude or OpenAI); its SDK is imported on first use.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from neural_memory.domain.filters import Filter
from neural_memory.models import MAX_FILTER_VALUES, Timestamp
from neural_memory.providers.llm.base import ToolCallFailed
from neural_memory.providers.llm.claude_tool import DEFAULT_MODEL, AnthropicProvider

if TYPE_CHECKING:
    from neural_memory.providers.llm.base import LlmProvider
    from neural_memory.providers.sdk_clients import ApiKey
    from neural_memory.stores.base import Store

TOOL_NAME = "apply_filters"
MAX_KNOWN = 200  # values of each kind offered to the model (the most frequent first)
SYSTEM_PROMPT = (
    "You turn a search query over an engineering team's memory into filters. Use a filter only when "
    "the query asks for it (a person, a kind of event, a source, a time); use only the listed values. "
    "Put the words that remain to be searched in `query`, without the words that became filters. "
    f"Call {TOOL_NAME} once."
)


@dataclass(frozen=True)
class KnownValues:
    """What a workspace holds, by kind: the only values a proposal may use."""

    sources: tuple[str, ...] = ()
    observation_types: tuple[str, ...] = ()
    actor_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Proposal:
    """Filters inferred from a query (empty: none of that kind) and the query text left."""

    query: str
    sources: tuple[str, ...] = ()
    observation_types: tuple[str, ...] = ()
    actor_names: tuple[str, ...] = ()
    start: datetime | None = None
    end: datetime | None = None

    def is_empty(self) -> bool:
        """True when nothing was inferred."""
        return not (self.sources or self.observation_types or self.actor_names or self.start or self.end)


# The fields whose values autoFilters may infer.
KNOWN_FIELDS = ("source", "observation_type", "actor_name")
# Counted from before any record could expire: known values include those of expired records
# (until purged), superseded and archived ones.
_EVERY_RECORD = Filter(live_at=datetime(1970, 1, 1, tzinfo=UTC), include_superseded=True, include_archived=True)


def known_values(store: Store, workspace_id: str, limit: int) -> dict[str, list[str]]:
    """The workspace's distinct ``source``, ``observation_type`` and ``actor_name`` values, the
    most frequent first (ties by value), at most ``limit`` of each: the store's facets of every
    record."""
    counted = store.facets(workspace_id, _EVERY_RECORD, limit).by_field
    return {field: [value for value, _ in counted.get(field, [])] for field in KNOWN_FIELDS}


class KnownValuesCache:
    """Each workspace's values from the store, kept ``ttl_s`` seconds: reading them walks the
    workspace, and a new actor may wait a minute before it can be inferred."""

    def __init__(self, store: Store, ttl_s: float = 60.0) -> None:
        self._store = store
        self._ttl_s = ttl_s
        self._lock = threading.Lock()
        self._cached: dict[str, tuple[float, KnownValues]] = {}

    def get(self, workspace_id: str) -> KnownValues:
        """The workspace's values, read again once they are older than the TTL."""
        now = time.monotonic()
        with self._lock:
            hit = self._cached.get(workspace_id)
        if hit is not None and now - hit[0] < self._ttl_s:
            return hit[1]
        values = known_values(self._store, workspace_id, MAX_KNOWN)
        known = KnownValues(
            sources=tuple(values.get("source", ())),
            observation_types=tuple(values.get("observation_type", ())),
            actor_names=tuple(values.get("actor_name", ())),
        )
        with self._lock:
            self._cached[workspace_id] = (now, known)
        return known


# Inference failures are the tool call's (the name says which caller raised it).
InferenceFailed = ToolCallFailed


class FilterProposer(Protocol):
    """Infers filters for a query from the values a workspace holds."""

    def propose(self, query: str, now: datetime, known: KnownValues) -> Proposal:
        """Raises ``InferenceFailed`` when it cannot."""
        ...


class _DateRange(BaseModel):
    model_config = ConfigDict(extra="ignore")
    start: Timestamp | None = None
    end: Timestamp | None = None


class _ToolInput(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)
    query: str = Field(min_length=1, max_length=2000)
    source_types: list[str] = Field(default_factory=list, alias="sourceTypes")
    observation_types: list[str] = Field(default_factory=list, alias="observationTypes")
    actor_names: list[str] = Field(default_factory=list, alias="actorNames")
    date_range: _DateRange | None = Field(default=None, alias="dateRange")


class LlmFilterProposer:
    """``FilterProposer`` on an ``LlmProvider``, with a time budget and no retries."""

    def __init__(self, provider: LlmProvider) -> None:
        self.model = provider.model
        self._provider = provider

    def propose(self, query: str, now: datetime, known: KnownValues) -> Proposal:
        """One forced tool call; the reply checked against ``known``."""
        # The client's local time, with its offset: "today" and "last week" are the client's.
        prompt = f"Now: {now.isoformat(timespec='seconds')}\nQuery: {json.dumps(query, ensure_ascii=False)}"
        tool_input = self._provider.forced_tool_input(
            system=SYSTEM_PROMPT, tool=_tool(known), prompt=prompt, max_tokens=400
        )
        return _parse(tool_input, known)


class AnthropicFilterProposer(LlmFilterProposer):
    """``LlmFilterProposer`` on Claude alone (default Haiku 4.5)."""

    def __init__(
        self, api_key: ApiKey, model: str = DEFAULT_MODEL, timeout_s: float = 3.0, http_client: Any = None
    ) -> None:
        """``http_client`` is the SDK's HTTP client; tests pass one with a mock transport."""
        super().__init__(AnthropicProvider(api_key, model=model, timeout_s=timeout_s, http_client=http_client))


def _tool(known: KnownValues) -> dict[str, Any]:
    """The tool, its lists limited to ``known`` (a kind the workspace has none of is left out)."""
    properties: dict[str, Any] = {"query": {"type": "string", "description": "the words left to search"}}
    for name, values in (
        ("sourceTypes", known.sources),
        ("observationTypes", known.observation_types),
        ("actorNames", known.actor_names),
    ):
        if values:
            properties[name] = {"type": "array", "items": {"type": "string", "enum": list(values[:MAX_KNOWN])}}
    properties["dateRange"] = {
        "type": "object",
        "properties": {
            "start": {"type": "string", "format": "date-time"},
            "end": {"type": "string", "format": "date-time"},
        },
    }
    return {
        "name": TOOL_NAME,
        "description": "Apply the filters the query asks for, using only the listed values.",
        "input_schema": {"type": "object", "properties": properties, "required": ["query"]},
    }


def _parse(tool_input: Any, known: KnownValues) -> Proposal:
    try:
        reply = _ToolInput.model_validate(tool_input)
    except ValidationError as exc:
        raise InferenceFailed("error", "malformed tool input") from exc
    if not reply.query.strip():
        raise InferenceFailed("error", "no query text left")
    dates = reply.date_range or _DateRange()
    if dates.start and dates.end and dates.start > dates.end:
        dates = _DateRange()
    return Proposal(
        query=reply.query.strip(),
        sources=_known(reply.source_types, known.sources),
        observation_types=_known(reply.observation_types, known.observation_types),
        actor_names=_known(reply.actor_names, known.actor_names),
        start=dates.start,
        end=dates.end,
    )


def _known(values: list[str], allowed: tuple[str, ...]) -> tuple[str, ...]:
    """The proposed values the workspace holds, once each (anything else is dropped)."""
    return tuple(dict.fromkeys(v for v in values if v in allowed))[:MAX_FILTER_VALUES]
