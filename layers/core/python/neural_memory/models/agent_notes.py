"""One memory as an agent writes it (the MCP ``remember`` tool's argument), and the API
observation it becomes: the one shape of an agent's write, which the evaluation loader writes
its chat turns through too (``local/evaluation/conversations.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, JsonValue

from neural_memory.models.chat_turns import CHAT_TURN_TYPE
from neural_memory.models.observations import CodeRef
from neural_memory.models.wire import WireModel

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["AgentNote"]

TIER_DESCRIPTION = (
    "How long it is found by meaning. A: for good (the default of notes and decisions). C (the default of "
    f"{CHAT_TURN_TYPE}): by meaning for 7 days after it occurred, then by its exact words only. E: by its words "
    f"only. To have a conversation remembered by meaning for good, write its turns ({CHAT_TURN_TYPE} with a "
    "sessionId) with tier A."
)


class AgentNote(WireModel):
    """One memory as an agent writes it: only ``content`` is required."""

    content: str = Field(min_length=1, description="What to remember, as self-contained sentences.")
    title: str | None = Field(default=None, description="A short title; default: the first words of content.")
    observation_type: str = Field(
        default="note",
        description=f"note (default), decision, design_note, bug, {CHAT_TURN_TYPE} (one turn of a chat: give "
        "its sessionId, and each turn is also read after the turn before it), ...",
    )
    source: str = Field(default="agent", description="Where it comes from (default agent).")
    occurred_at: str | None = Field(
        default=None, description="When it happened, ISO-8601 with a zone (2025-12-12T10:00:00Z); default now."
    )
    id: str | None = Field(
        default=None,
        description="A stable id (letters, digits, _ . : -) to update this memory later; default: derived.",
    )
    actor_name: str | None = Field(default=None, description="Who said or did it.")
    session_id: str | None = Field(default=None, description="The conversation or session it belongs to.")
    url: str | None = Field(default=None, description="A link to the source (http or https).")
    tier: Literal["A", "C", "E"] | None = Field(default=None, description=TIER_DESCRIPTION)
    metadata: dict[str, JsonValue] | None = Field(default=None, description="Extra key/value facts to filter on.")
    supersedes: list[str] | None = Field(default=None, description="Ids of older memories this one replaces.")
    code_refs: list[CodeRef] | None = Field(
        default=None,
        description="Code it is about, [{repository: owner/name, paths: [...]}]: a later push touching one of the "
        "paths marks it possibly stale.",
    )

    def observation(self, now: datetime) -> dict[str, Any]:
        """The API's observation: this note with its defaults, time now unless given."""
        body = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        body.setdefault("occurredAt", now.isoformat())
        return body
