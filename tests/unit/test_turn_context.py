"""Chat turns read in context: which turns get a context passage, and what it holds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from neural_memory.domain.tiers import DEFAULT_POLICY
from neural_memory.ingest.prepare import prepare
from neural_memory.ingest.turn_context import add_turn_context
from neural_memory.models import ObservationIn, ObservationRecord
from neural_memory.models.chat_turns import CHAT_TURN_TYPES

NOW = datetime(2026, 1, 15, 12, tzinfo=UTC)


def _item(obs_id: str, content: str, minute: int, **extra: Any) -> Any:
    fields: dict[str, Any] = {"id": obs_id, "source": "agent", "observationType": "conversation_turn"}
    fields["sessionId"] = "s1"
    fields["tier"] = "A"
    fields |= {"occurredAt": NOW + timedelta(minutes=minute), "content": content, **extra}
    return prepare(ObservationIn.model_validate(fields), now=NOW, policy=DEFAULT_POLICY, ttl_days=7)


def test_each_turn_gets_the_turn_before_it_in_its_session_as_a_passage_in_time_order() -> None:
    # Given three turns of one session, out of order in the batch, the first with a stored turn before it
    items = [
        _item("t3", "Yes, last Tuesday.", 3),
        _item("t1", "Did you adopt the puppy?", 1),
        _item("t2", "Which one?", 2),
    ]
    stored = {"s1": _item("t0", "We visited the shelter.", 0).record}
    # When context is added
    add_turn_context(items, lambda session, before: stored.get(session))
    by_id = {item.record.id: item for item in items}
    # Then each turn keeps its own chunk first, and has one more, searched both ways: the turn before, then itself
    for obs_id, context in (
        ("t1", "We visited the shelter."),
        ("t2", "Did you adopt the puppy?"),
        ("t3", "Which one?"),
    ):
        chunks = by_id[obs_id].chunks
        assert [c.role for c in chunks] == ["both", "both"]
        assert chunks[1].text == f"{context}\n{by_id[obs_id].record.content}" and chunks[1].chunk_no == 1
        assert chunks[1].lexical and chunks[1].embedded


def test_a_first_turn_notes_turns_without_a_session_and_never_embedded_tiers_get_no_context() -> None:
    first = _item("t1", "Hello there.", 1)
    other = _item("o1", "Another chat.", 2, sessionId="s2")
    note = _item("n1", "A note.", 3, observationType="note", source="manual")
    unembedded = _item("e1", "ok", 4, tier="E")
    alone = _item("a1", "No session.", 5, sessionId=None)
    add_turn_context([first, other, note, unembedded, alone], lambda session, before: None)
    assert all(len(item.chunks) == 1 for item in (first, other, note, unembedded, alone))


@pytest.mark.parametrize("observation_type", sorted(CHAT_TURN_TYPES))
def test_every_chat_turn_type_is_read_in_context(observation_type: str) -> None:
    # Given a turn of each chat-turn type after one of the other (agents write conversation_turn)
    items = [_item("t1", "Did you adopt the puppy?", 1), _item("t2", "Yes.", 2, observationType=observation_type)]
    add_turn_context(items, lambda session, before: None)
    assert items[1].chunks[1].text == "Did you adopt the puppy?\nYes."


def test_the_store_is_asked_once_per_session_for_the_turn_before_the_batch() -> None:
    asked: list[tuple[str, datetime]] = []
    items = [_item("t1", "one", 1), _item("t2", "two", 2), _item("x1", "three", 3, sessionId="s2")]

    def earlier(session: str, before: datetime) -> ObservationRecord | None:
        asked.append((session, before))
        return None

    add_turn_context(items, earlier)
    assert sorted(asked) == [("s1", NOW + timedelta(minutes=1)), ("s2", NOW + timedelta(minutes=3))]


def test_each_line_of_the_passage_names_who_said_it_when_the_turn_says() -> None:
    # Given Caroline answering Melanie, and a turn from no one in particular
    items = [
        _item("t1", "What did you research?", 1, actorName="Melanie"),
        _item("t2", "Adoption agencies.", 2, actorName="Caroline"),
        _item("t3", "Noted.", 3),
    ]
    add_turn_context(items, lambda session, before: None)
    # Then the passage reads as the dialogue: a question naming Caroline finds her own turn by it
    assert items[1].chunks[1].text == "Melanie: What did you research?\nCaroline: Adoption agencies."
    assert items[2].chunks[1].text == "Caroline: Adoption agencies.\nNoted."


def test_a_turn_written_alone_reads_as_many_stored_turns_before_it_as_asked_oldest_first() -> None:
    # Given three stored turns of the session, and one more written alone (as an agent remembers)
    stored = [_item(f"s{n}", f"stored {n}", n, actorName="Ana").record for n in (1, 2, 3)]

    def earlier(session: str, before: datetime) -> ObservationRecord | None:
        older = [r for r in stored if r.session_id == session and r.occurred_at < before]
        return older[-1] if older else None

    alone = _item("t4", "Yes.", 4, actorName="Ben")
    # When context of two turns is added
    add_turn_context([alone], earlier, turns_before=2)
    # Then it holds the two latest stored turns, oldest first, then itself
    assert alone.chunks[1].text == "Ana: stored 2\nAna: stored 3\nBen: Yes."
