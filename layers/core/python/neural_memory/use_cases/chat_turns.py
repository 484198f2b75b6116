"""A chat turn's context chunk kept true to the store: the earlier turn it is read from, and the
turns cut again when a turn they quoted is deleted, purged or redacted (``ingest/turn_context.py``
holds what a context is; this holds when it is rewritten)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from neural_memory.domain.record_rules import lifecycle_state
from neural_memory.ingest.prepare import chunked
from neural_memory.ingest.turn_context import add_stored_turn_context, previous_in_session, quoting
from neural_memory.models.chat_turns import CHAT_TURN_TYPES
from neural_memory.stores.find import Find

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from neural_memory.models import ObservationRecord
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store
    from neural_memory.use_cases.embedding import Embedding


@dataclass(frozen=True)
class ChatTurns:
    """The context chunks of chat turns in one store, cut and embedded as ``embedding`` says."""

    store: Store
    settings: Settings
    clock: Callable[[], datetime]
    embedding: Embedding

    def earlier_turn(self, workspace_id: str) -> Callable[[str, datetime], ObservationRecord | None]:
        """The session's latest observation before a moment, in one workspace: what a chat turn's
        context chunk is read from."""
        return partial(previous_in_session, self.store, workspace_id)

    def recut_turns_quoting(self, workspace_id: str, deleted: Sequence[ObservationRecord]) -> None:
        """Cut again the turns whose context chunk quoted these chat turns (deleted, or redacted by
        ``scrub``), so their old words are not found through them: each such turn once, however
        many of them it quoted (a purge deletes runs of a session's turns), written only if
        unchanged since read."""
        if not self.settings.turn_context or self.embedding.embedder is None:
            return
        now = self.clock()
        quoted = {
            t.id: t for record in deleted for t in quoting(self.store, workspace_id, record, self.settings.turn_context)
        }
        turns = list(quoted.values())
        if not turns:
            return
        items = [chunked(record, self.embedding.chunking, now) for record in turns]
        add_stored_turn_context(items, self.earlier_turn(workspace_id), self.settings.turn_context)
        self.embedding.embed_chunks(workspace_id, items)
        self.store.write(workspace_id, items, {record.id: lifecycle_state(record) for record in turns})

    def expiring(self, now: datetime) -> dict[str, list[ObservationRecord]]:
        """By workspace, the chat turns a purge at ``now`` deletes (none read when no context
        chunk quotes them: ``turn_context`` off or nothing embedded)."""
        if not self.settings.turn_context or self.embedding.embedder is None:
            return {}
        expiring = Find(expired_at=now, observation_types=tuple(sorted(CHAT_TURN_TYPES)))
        by_workspace = self.store.count(None, expiring, by="workspace_id")
        return {ws: self.store.find(ws, expiring) for ws in sorted(by_workspace)}  # ``quoting`` skips sessionless
