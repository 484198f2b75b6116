"""Normalizers: one per event source, each turning a real payload into ``ObservationIn`` models.

A normalizer returns the observations an event yields (possibly none, with the reason in
``Skipped``) and raises ``UnsupportedEvent`` for a payload it cannot understand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.ingest.normalizers.base import Normalized, Skipped, UnsupportedEvent

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Normalized", "Skipped", "UnsupportedEvent", "event_sources", "normalize_eventbridge"]


def _registry() -> dict[str, Callable[[str, dict[str, Any], str | None], Normalized]]:
    from neural_memory.ingest.normalizers import generic, github, vercel

    return {"github": github.normalize, "vercel": vercel.normalize, generic.SOURCE: generic.normalize}


def event_sources() -> tuple[str, ...]:
    """Every EventBridge ``source`` a normalizer accepts: the stack derives its bus rules from
    these, so an event the ingest function can read never goes unrouted on the bus."""
    return tuple(_registry())


def normalize_eventbridge(event: dict[str, Any]) -> Normalized:
    """Observations from one EventBridge event (``source``, ``detail-type``, ``detail``)."""
    source = event.get("source")
    detail_type = event.get("detail-type")
    detail = event.get("detail")
    if not isinstance(source, str) or not isinstance(detail_type, str) or not isinstance(detail, dict):
        raise UnsupportedEvent("not an EventBridge event: needs source, detail-type and an object detail")
    normalizer = _registry().get(source)
    if normalizer is None:
        raise UnsupportedEvent(f"no normalizer for event source {source!r}")
    event_time = event.get("time") if isinstance(event.get("time"), str) else None
    return normalizer(detail_type, detail, event_time)
