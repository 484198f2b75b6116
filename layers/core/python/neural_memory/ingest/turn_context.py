"""Chat turns read in context: a turn alone ("Yes, last Tuesday") often means little, so an
embedded chat turn (``models/chat_turns.py``: a chat-turn type with a session) gets one more
chunk, its context: the two turns before it in its session, then the turn, each line naming who
said it ("Melanie: What are you researching?").

The turn keeps its own chunk (searched both ways, as before); the context chunk is searched both
ways too, and never shown: results show the turn's own content. Each retriever takes an
observation's best chunk, so the turn is found by what it says alone or by what it answers: the
question before an answer holds the words a later question asks with, and the speakers are who
a question names while their own turns never do. Measured on LoCoMo dev, written as agents write
(docs/benchmarks.md, issue 33): speakers lifted semantic recall@10 0.5228 -> 0.5494, two turns
with them 0.5586; the context read by keyword too lifted hybrid 0.7110 -> 0.7344 (vector only,
hybrid stayed below 0.72). The session's date in words was measured and left out (semantic 0.5116
alone, 0.5297 with the speakers). Notes and events are unaffected. The context goes with the
vectors: a C turn past its window is cut again without it, and found by its own words. A deleted
turn's words leave the context of the turns after it too (``quoting``: they are cut again)."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from neural_memory.domain.tiers import embeds
from neural_memory.models import Chunk
from neural_memory.models.chat_turns import is_chat_turn
from neural_memory.stores.find import Find

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from neural_memory.models import ObservationRecord
    from neural_memory.stores.base import IndexedObservation, Store


def add_turn_context(
    items: Sequence[IndexedObservation],
    earlier: Callable[[str, datetime], ObservationRecord | None],
    turns_before: int = 1,
) -> None:
    """Append a context chunk to each embedded chat turn that has a turn before it in its
    session: the ``turns_before`` turns before it, from this batch and, before the batch's first,
    the latest stored ones (``earlier``: the session's latest observation before a moment, asked
    again from each one found, so a turn an agent remembers alone reads as one in a batch)."""
    sessions: dict[str, list[IndexedObservation]] = defaultdict(list)
    for item in items:
        record = item.record
        if record.session_id and is_chat_turn(record.observation_type, record.session_id) and embeds(record):
            sessions[record.session_id].append(item)
    for session_id, turns in sessions.items():
        turns.sort(key=lambda item: item.record.occurred_at)
        window = stored_before(session_id, turns[0].record.occurred_at, earlier, turns_before)
        for item in turns:
            if window:
                text = context_text(window[-turns_before:], item.record)
                item.chunks.append(Chunk(chunk_no=len(item.chunks), text=text, role="both"))
            window.append(item.record)


def add_stored_turn_context(
    items: Sequence[IndexedObservation],
    earlier: Callable[[str, datetime], ObservationRecord | None],
    turns_before: int = 1,
) -> None:
    """Each chat turn's context chunk from the store alone, whatever order ``items`` come in: a
    rebuild (a reindex) reads records by id, so two turns of a batch need not be neighbours."""
    for item in items:
        add_turn_context([item], earlier, turns_before)


def previous_in_session(store: Store, workspace_id: str, session_id: str, before: datetime) -> ObservationRecord | None:
    """The latest observation of the session that occurred before ``before`` (a chat turn's
    predecessor, read for its context), or None: what ``earlier`` asks."""
    found = store.find(workspace_id, Find(session_id=session_id, occurred_before=before, newest_first=True, limit=1))
    return found[0] if found else None


def quoting(store: Store, workspace_id: str, deleted: ObservationRecord, turns_before: int) -> list[ObservationRecord]:
    """The stored turns whose context chunk quotes ``deleted``: the ``turns_before`` observations
    after it in its session (one ``find``)."""
    if not deleted.session_id or not is_chat_turn(deleted.observation_type, deleted.session_id):
        return []
    after = Find(session_id=deleted.session_id, occurred_after=deleted.occurred_at, limit=turns_before)
    return list(store.find(workspace_id, after))


def stored_before(
    session_id: str, moment: datetime, earlier: Callable[[str, datetime], ObservationRecord | None], count: int
) -> list[ObservationRecord]:
    """The session's ``count`` latest stored observations before ``moment``, oldest first."""
    found: list[ObservationRecord] = []
    while len(found) < count and (record := earlier(session_id, moment)) is not None:
        found.insert(0, record)
        moment = record.occurred_at
    return found


def context_text(before: Sequence[ObservationRecord], turn: ObservationRecord) -> str:
    """The context of ``turn``: the turns before it, then its own, each as ``speaker: words``."""
    return "\n".join(said(record) for record in [*before, turn])


def said(record: ObservationRecord) -> str:
    """One turn's line of a context chunk: ``speaker: words``, or its words alone."""
    words = record.content or record.title
    return f"{record.actor_name}: {words}" if record.actor_name else words
