"""Time as the stores keep it: UTC, integer epoch milliseconds."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def to_ms(moment: datetime) -> int:
    """Epoch milliseconds of an aware datetime."""
    return int(moment.timestamp() * 1000)


def from_ms(value: int) -> datetime:
    """Aware UTC datetime from epoch milliseconds."""
    return datetime.fromtimestamp(value / 1000, tz=UTC)
