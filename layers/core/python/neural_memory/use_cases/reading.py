"""Reading one observation (``GET /v1/observations/{id}``) and the wire form of a stored one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from neural_memory.engineering.staleness import code_refs_out
from neural_memory.errors import NotFound
from neural_memory.models import ObservationOut
from neural_memory.redaction.identifiers import stored_id
from neural_memory.redaction.observations import redactions_out
from neural_memory.stores.base import read_one

if TYPE_CHECKING:
    from neural_memory.models import ObservationRecord
    from neural_memory.stores.base import Store


@dataclass(frozen=True)
class Reading:
    """Observations of one store, one at a time."""

    store: Store

    def read(self, *, workspace_id: str, observation_id: str, request_id: str) -> ObservationOut:
        """One observation of the workspace, or ``NotFound``."""
        observation_id = stored_id(observation_id)  # an id sent with a secret in it: its derived id
        record = read_one(self.store, workspace_id, observation_id)
        if record is None:
            raise NotFound(f"observation {observation_id!r} not found")
        return observation_out(record, request_id)


def observation_out(record: ObservationRecord, request_id: str) -> ObservationOut:
    """The wire form of a stored observation (its internal hashes left out)."""
    return ObservationOut(
        **record.model_dump(exclude={"content_hash", "recurrence_key", "code_refs", "stale_at", "redactions"}),
        code_refs=code_refs_out(record.code_refs),
        redactions=redactions_out(record.redactions),
        request_id=request_id,
    )
