"""What every normalizer returns or raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neural_memory.models import ObservationIn


class UnsupportedEvent(ValueError):
    """The payload cannot be turned into observations; the message says why."""


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


def first_line(text: str | None, limit: int = 200) -> str:
    """The first line of ``text``, cut to ``limit`` characters."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line[:limit]
