"""Observations posted to the bus by our own clients and agents: ``source``
``neural-memory.<workspace>``, ``detail-type`` the observation type (``note``,
``conversation_turn``, ...), ``detail`` an observation in the API's shape (``POST /v1/observations``).

The workspace is in the source, not the detail, because the source is the only field of an entry
an IAM condition (``events:source``) can see: the stack grants each workspace's agents PutEvents
for their own source alone, so the credential decides the workspace (README, "Agents on the bus").
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from neural_memory.ingest.normalizers.base import MalformedEvent, Normalized
from neural_memory.models import ObservationIn

# The EventBridge source of our own clients' and agents' events is this prefix and the workspace.
SOURCE_PREFIX = "neural-memory."


def source_for(workspace: str) -> str:
    """``neural-memory.<workspace>``: the source an agent of ``workspace`` puts its events with."""
    return SOURCE_PREFIX + workspace


def workspace_of(source: str) -> str | None:
    """The workspace an agent source names, or None when ``source`` is not one."""
    workspace = source.removeprefix(SOURCE_PREFIX)
    return workspace if source.startswith(SOURCE_PREFIX) and workspace else None


def normalize(detail_type: str, detail: dict[str, Any], event_time: str | None) -> Normalized:
    """One observation; ``observationType`` defaults to the detail-type, ``occurredAt`` to the event time."""
    body = {key: value for key, value in detail.items() if key != "workspace"}
    body.setdefault("observationType", detail_type)
    body.setdefault("occurredAt", event_time)
    body.setdefault("source", "agent" if detail_type == "conversation_turn" else "manual")
    try:
        return Normalized(observations=[ObservationIn.model_validate(body)])
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise MalformedEvent(f"{detail_type} event is malformed: {where}: {first['msg']}") from exc
