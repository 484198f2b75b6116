"""Normalizers: one per event source, each turning a real payload into ``ObservationIn`` models.

A normalizer returns the observations an event yields (possibly none, with the reason in
``Skipped``) and raises ``UnsupportedEvent`` for a payload it cannot understand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from neural_memory.ingest.normalizers.base import MalformedEvent, Normalized, Skipped, UnsupportedEvent

__all__ = [
    "MalformedEvent",
    "Normalized",
    "SourcePattern",
    "Skipped",
    "UnsupportedEvent",
    "event_sources",
    "matches",
    "normalize_eventbridge",
]

# An element of an EventBridge rule's ``source`` pattern: a source, or ``{"prefix": ...}`` for a
# family of them (the agents' ``neural-memory.<workspace>``).
SourcePattern = str | dict[str, str]
_Normalizer = Callable[[str, dict[str, Any], str | None], Normalized]


def _registry() -> list[tuple[SourcePattern, _Normalizer]]:
    from neural_memory.ingest.normalizers import generic, github, vercel

    return [
        ("github", github.normalize),
        ("vercel", vercel.normalize),
        ({"prefix": generic.SOURCE_PREFIX}, generic.normalize),
    ]


def event_sources() -> tuple[SourcePattern, ...]:
    """Every EventBridge ``source`` a normalizer accepts, as rule patterns: the stack derives its bus
    rules from these, so an event the ingest function can read never goes unrouted on the bus."""
    return tuple(pattern for pattern, _ in _registry())


def matches(pattern: SourcePattern, source: str) -> bool:
    """Whether ``source`` matches one element of a rule's ``source`` pattern, as EventBridge decides."""
    if isinstance(pattern, str):
        return source == pattern
    return set(pattern) == {"prefix"} and source.startswith(pattern["prefix"])


def normalize_eventbridge(event: dict[str, Any]) -> Normalized:
    """Observations from one EventBridge event (``source``, ``detail-type``, ``detail``)."""
    source = event.get("source")
    detail_type = event.get("detail-type")
    detail = event.get("detail")
    if not isinstance(source, str) or not isinstance(detail_type, str) or not isinstance(detail, dict):
        raise UnsupportedEvent("not an EventBridge event: needs source, detail-type and an object detail")
    normalizer = next((n for pattern, n in _registry() if matches(pattern, source)), None)
    if normalizer is None:
        raise UnsupportedEvent(f"no normalizer for event source {source!r}")
    event_time = event.get("time") if isinstance(event.get("time"), str) else None
    try:
        return normalizer(detail_type, detail, event_time)
    except UnsupportedEvent:
        raise
    except (TypeError, ValueError, AttributeError, LookupError, OverflowError, RecursionError) as exc:
        # The normalizers check the types they read; a payload shape they still missed is refused
        # as this one event with the reason, never a crash of the request, batch or run around it.
        raise MalformedEvent(f"{source} {detail_type} payload is malformed: {type(exc).__name__}: {exc}") from exc
