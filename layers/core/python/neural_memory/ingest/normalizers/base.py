"""What every normalizer returns or raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neural_memory.models import ObservationIn


class UnsupportedEvent(ValueError):
    """The payload cannot be turned into observations; the message says why."""


class MalformedEvent(UnsupportedEvent):
    """An event of a kind we read whose payload does not have the shape its provider documents (a
    field of the wrong type, a time out of range): refused as that one event, with the reason (400
    from a webhook receiver, a failed record on the queue, a failure line from ``ingest``)."""


@dataclass(frozen=True)
class Skipped:
    """An event understood and deliberately not observed (e.g. a branch deletion)."""

    reason: str


@dataclass
class Normalized:
    """Observations from one event, or the reason it yields none."""

    observations: list[ObservationIn] = field(default_factory=list)
    skipped: Skipped | None = None


def dig(payload: Any, *path: str) -> Any:
    """``payload[path[0]][path[1]]...`` or None when any step is missing or not an object."""
    for key in path:
        if not isinstance(payload, dict):
            return None
        payload = payload.get(key)
    return payload


def first_line(text: object, limit: int = 200, *, field: str = "text") -> str:
    """The first line of ``text``, cut to ``limit`` characters ("" for None); ``MalformedEvent``
    naming ``field`` when it is not a string."""
    text = optional_text(text, field) or ""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:limit]


def optional_text(value: object, field: str) -> str | None:
    """``value`` when it is a string or None; ``MalformedEvent`` naming ``field`` otherwise (a
    title, message or body of another JSON type is not text we could index faithfully)."""
    if value is None or isinstance(value, str):
        return value
    raise MalformedEvent(f"{field} is a {_json_type(value)}, not a string")


def _json_type(value: object) -> str:
    names = {bool: "boolean", int: "number", float: "number", list: "list", dict: "object"}
    return names.get(type(value), type(value).__name__)
