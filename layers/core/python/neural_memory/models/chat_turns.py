"""What a chat turn is, for ingest, the evaluation loader and the docs alike: an observation of
a chat-turn type that belongs to a session (``sessionId``). Agents write ``conversation_turn``
(the MCP ``remember`` tool, the bus, docs/api.md); ``message`` is the same thing under the name
older data and the first evaluations used. An embedded chat turn is read in context
(``ingest/turn_context.py``); a turn without a session is a note like any other."""

from __future__ import annotations

CHAT_TURN_TYPE = "conversation_turn"
CHAT_TURN_TYPES = frozenset({CHAT_TURN_TYPE, "message"})


def is_chat_turn(observation_type: str, session_id: str | None) -> bool:
    """Whether an observation of this type and session is a chat turn."""
    return observation_type in CHAT_TURN_TYPES and bool(session_id)
