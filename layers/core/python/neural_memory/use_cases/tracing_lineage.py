"""Why an observation changed (``GET /v1/observations/{id}/lineage``): its supersession chain
both ways and the observations sharing an engineering key with it (``engineering/lineage.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.domain.tiers import visible_after
from neural_memory.engineering.lineage import trace
from neural_memory.errors import NotFound
from neural_memory.models import LineageResponse
from neural_memory.redaction.identifiers import stored_id
from neural_memory.stores.base import read_one

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from neural_memory.settings import Settings
    from neural_memory.stores.base import Store


@dataclass(frozen=True)
class TracingLineage:
    """Why observations of one store changed, at the clock's now."""

    store: Store
    settings: Settings
    clock: Callable[[], datetime]

    def trace(self, *, workspace_id: str, observation_id: str, limit: int, request_id: str) -> LineageResponse:
        """Why the observation changed: its supersession chain both ways and the observations
        sharing an engineering key with it, oldest first (``engineering.lineage``); ``NotFound``
        if it is not in the workspace (or expired) now."""
        observation_id = stored_id(observation_id)  # an id sent with a secret in it: its derived id
        record = read_one(self.store, workspace_id, observation_id)
        visible = visible_after(self.clock(), self.settings.collaborative_after_window)
        if record is None or (record.expires_at is not None and record.expires_at <= visible):
            raise NotFound(f"observation {observation_id!r} not found")
        timeline, truncated = trace(self.store, workspace_id, record, visible, limit)
        return LineageResponse(request_id=request_id, id=record.id, timeline=timeline, truncated=truncated)
