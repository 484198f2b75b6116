"""Time as the stores keep it: UTC, as integer epoch milliseconds (SQLite) or ISO-8601 (OpenSearch)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def to_ms(moment: datetime) -> int:
    """Epoch milliseconds of an aware datetime (exact integer arithmetic, no float rounding)."""
    return (moment - _EPOCH) // _MS


def from_ms(value: int) -> datetime:
    """Aware UTC datetime from epoch milliseconds (exact up to the last millisecond of year 9999)."""
    return _EPOCH + value * _MS


def to_iso(moment: datetime) -> str:
    """ISO-8601, ``Z`` for UTC (how OpenSearch documents and queries carry time)."""
    return moment.isoformat().replace("+00:00", "Z")


def from_iso(value: str) -> datetime:
    """Aware datetime from ISO-8601 (``Z`` or an offset)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
