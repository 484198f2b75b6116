"""Chat turns read in context: a turn alone ("Yes, last Tuesday") often means little, so an
embedded chat turn (``models/chat_turns.py``: a chat-turn type with a session) gets a second
vector, of the turn after the one before it in its session.

The turn keeps its own chunk (searched both ways, as before); the context is one more
``passage`` chunk, searched by vector only (no BM25 statistic counts it) and never returned:
results show the turn's own content. Vector search takes an observation's best passage, so the
turn is found by what it says alone or by what it answers. Notes and events are unaffected."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from neural_memory.models import Chunk
from neural_memory.models.chat_turns import is_chat_turn
from neural_memory.search.tiers import embeds

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from neural_memory.models import ObservationRecord
    from neural_memory.stores.base import IndexedObservation


def add_turn_context(
    items: Sequence[IndexedObservation],
    earlier: Callable[[str, datetime], ObservationRecord | None],
    turns_before: int = 1,
) -> None:
    """Append a context passage to each embedded chat turn that has a turn before it in its
    session: the turn before it in this batch, else the latest stored one (``earlier``)."""
    sessions: dict[str, list[IndexedObservation]] = defaultdict(list)
    for item in items:
        record = item.record
        if record.session_id and is_chat_turn(record.observation_type, record.session_id) and embeds(record):
            sessions[record.session_id].append(item)
    for session_id, turns in sessions.items():
        turns.sort(key=lambda item: item.record.occurred_at)
        stored = earlier(session_id, turns[0].record.occurred_at)
        window = [stored] if stored else []
        for item in turns:
            if window:
                text = context_text(window[-turns_before:], item.record)
                item.chunks.append(Chunk(chunk_no=len(item.chunks), text=text, role="passage"))
            window.append(item.record)


def context_text(before: Sequence[ObservationRecord], turn: ObservationRecord) -> str:
    """The context passage of ``turn``: the words of the turns before it, then its own."""
    return "\n".join(record.content or record.title for record in [*before, turn])
