"""Promotion (``POST /v1/observations/{id}/promote``, and an answer's citations): a C observation
kept for good, tier A with no expiry, with who and why (``lifecycle.promotion``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.audit.trail import entry
from neural_memory.auth.roles import OPERATOR
from neural_memory.errors import Conflict, NotFound
from neural_memory.ingest import lifecycle
from neural_memory.observability import logger
from neural_memory.stores.base import RecordChanged, read_one
from neural_memory.use_cases.reading import observation_out

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from neural_memory.audit.trail import AuditLog
    from neural_memory.auth.roles import Caller
    from neural_memory.models import ObservationOut, ObservationRecord
    from neural_memory.stores.base import Store

PROMOTE_ATTEMPTS = 4  # promotions of an observation re-ingested under it


@dataclass(frozen=True)
class Promotion:
    """Promotes observations of one store, dated by ``clock``."""

    store: Store
    clock: Callable[[], datetime]
    audit: AuditLog | None = None

    def promote(
        self,
        workspace_id: str,
        observation_id: str,
        reason: str,
        by: str,
        request_id: str,
        caller: Caller = OPERATOR,
    ) -> ObservationOut:
        """``POST /v1/observations/{id}/promote``: a C observation of the workspace kept for good
        (tier A, no expiry), with who (``by``) and why; ``NotFound`` or ``Conflict`` (409);
        ``Forbidden`` for a ``read`` caller."""
        # Any write key may: a promotion changes no content, only how long it is kept (with who and
        # why on it, and in the audit trail); what a team keeps is mostly what no key wrote
        # (webhooks' pull requests and issues, agents' turns).
        caller.require("write", "promoting an observation")
        promoted = self.promoted(workspace_id, observation_id, by, reason)
        if self.audit is not None:
            done = entry(caller.name, "promote", [observation_id], request_id=request_id)
            self.audit.record(workspace_id, [done])
        return observation_out(promoted, request_id)

    def promoted(self, workspace_id: str, observation_id: str, by: str, reason: str) -> ObservationRecord:
        """C -> A (``lifecycle.promotion``): ``NotFound`` or ``Conflict``, naming why. The store
        promotes only the state checked (``lifecycle.restate``'s ``expected``), so of racing promotions one
        wins and the others get the ``Conflict`` naming who promoted it."""
        record = read_one(self.store, workspace_id, observation_id)
        for _ in range(PROMOTE_ATTEMPTS):
            if record is None:
                raise NotFound(f"observation {observation_id!r} not found")
            fields = lifecycle.promotion(record, self.clock(), by=by, reason=reason)
            checked = {"tier": record.tier, "expires_at": record.expires_at, "promoted_at": record.promoted_at}
            try:
                promoted = lifecycle.restate(self.store, workspace_id, observation_id, fields, checked)
            except RecordChanged as exc:  # promoted (or re-ingested) since it was read: judge it again
                record = exc.record
                continue
            if promoted is None:  # deleted meanwhile
                raise NotFound(f"observation {observation_id!r} not found")
            logger.info("observation promoted", extra={"observationId": observation_id, "by": by})
            return promoted
        raise Conflict(f"observation {observation_id!r} kept changing while being promoted: try again")
