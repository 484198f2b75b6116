"""Deleting one observation (``DELETE /v1/observations/{id}``) and what it leaves behind: what it
superseded is current again, its staleness marks are judged again, and the turns whose context
quoted it are cut again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.audit.trail import entry
from neural_memory.auth.roles import OPERATOR, require_owner
from neural_memory.domain.tiers import visible_after
from neural_memory.engineering import staleness
from neural_memory.errors import NotFound
from neural_memory.ingest import supersession
from neural_memory.models import DeleteResponse
from neural_memory.redaction.identifiers import stored_id
from neural_memory.stores.base import read_one

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from neural_memory.audit.trail import AuditLog
    from neural_memory.auth.roles import Caller
    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store
    from neural_memory.use_cases.chat_turns import ChatTurns


@dataclass(frozen=True)
class Deletion:
    """Deleting observations of one store, at the clock's now, into its audit trail."""

    store: Store
    turns: ChatTurns
    settings: Settings
    clock: Callable[[], datetime]
    audit: AuditLog | None = None

    def delete(
        self, *, workspace_id: str, observation_id: str, request_id: str, caller: Caller = OPERATOR
    ) -> DeleteResponse:
        """Delete one observation of the workspace with its chunks, or ``NotFound``; ``Forbidden``
        for a ``read`` caller, or a ``write`` caller that did not write it. What it superseded is
        current again, its staleness marks are judged again, the turns whose context quoted it are
        cut again, and the audit trail says who deleted it (before the reply)."""
        caller.require("write", "deleting an observation")
        observation_id = stored_id(observation_id)  # an id sent with a secret in it: its derived id
        store = self.store
        record = read_one(store, workspace_id, observation_id)
        if record is None:
            raise NotFound(f"observation {observation_id!r} not found")
        require_owner(caller, workspace_id, [(record.id, record.created_by)], "deleting")
        if not store.delete(workspace_id, observation_id):
            raise NotFound(f"observation {observation_id!r} not found")
        if self.audit is not None:
            self.audit.record(workspace_id, [entry(caller.name, "delete", [observation_id], request_id=request_id)])
        supersession.unmark_deleted(store, workspace_id, record.supersedes or [])
        visible = visible_after(self.clock(), self.settings.collaborative_after_window)
        staleness.remark(store, workspace_id, [], visible, deleted=record)
        self.turns.recut_turns_quoting(workspace_id, [record])
        return DeleteResponse(id=observation_id, deleted=True, request_id=request_id)
