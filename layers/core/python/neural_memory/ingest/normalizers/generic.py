"""Observations posted to the bus by our own clients and agents: ``source`` ``neural-memory``,
``detail-type`` the observation type (``note``, ``conversation_turn``, ...), ``detail`` an
observation in the API's shape (``POST /v1/observations``)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from neural_memory.ingest.normalizers.base import Normalized, UnsupportedEvent
from neural_memory.models import ObservationIn

SOURCE = "neural-memory"  # the EventBridge source of our own clients' and agents' events


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
        raise UnsupportedEvent(f"{detail_type} event is malformed: {where}: {first['msg']}") from exc
