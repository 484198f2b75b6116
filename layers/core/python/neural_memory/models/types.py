"""The constrained types and limits both the wire and the domain models are built from, and the
time-zone parsing of date ranges (``zone_of``)."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BeforeValidator,
    Field,
    PlainValidator,
    StringConstraints,
)

__all__ = [
    "Tier",
    "SecretsPolicy",
    "Expand",
    "SearchMode",
    "RerankMode",
    "BypassReason",
    "MAX_FILTER_VALUES",
    "MAX_QUERY_CHARS",
    "MAX_CONTENT_CHARS",
    "MAX_METADATA_BYTES",
    "MAX_METADATA_VALUE_CHARS",
    "MAX_EXACT_INTEGER",
    "MAX_SUPERSEDES",
    "MAX_REPLY_BYTES",
    "PromotionReason",
    "Slug",
    "ActorName",
    "ObservationId",
    "SessionId",
    "Url",
    "Vector",
    "QueryText",
    "Timestamp",
    "OccurredAt",
    "EARLIEST_OCCURRED_AT",
    "zone_of",
    "SlugList",
    "ActorList",
    "TierList",
    "MetadataKey",
    "MetadataValue",
    "MAX_FILTER_GROUPS",
]

Tier = Literal["A", "C", "E"]
# What a write carrying a secret gets: the secret replaced by a marker, or the write refused (422).
SecretsPolicy = Literal["redact", "refuse"]
# What ``expand`` rebuilds for each search result: the whole observation (a chat turn, a PR, a note).
Expand = Literal["observation"]
SearchMode = Literal["hybrid", "semantic", "keyword"]
RerankMode = Literal["fast", "balanced", "thorough", "local"]
BypassReason = Literal["small_result_set", "disabled", "not_configured", "error", "timeout"]

MAX_FILTER_VALUES = 50
MAX_QUERY_CHARS = 2000
MAX_CONTENT_CHARS = 200_000
MAX_METADATA_BYTES = 16_384
MAX_METADATA_VALUE_CHARS = 500
MAX_EXACT_INTEGER = 2**53  # beyond it a JSON number is not exact as a double (nor comparable alike in every store)
MAX_SUPERSEDES = 20
# A synchronous Lambda invocation answers at most 6 MB (API Gateway's own limit, 10 MB, is larger):
# the search reply, expanded texts included, stays under it (``search/expansion.py``).
MAX_REPLY_BYTES = 6_291_456

Slug = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")]
ActorName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
ObservationId = Annotated[
    str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
]
SessionId = Annotated[str, StringConstraints(min_length=1, max_length=200)]
PromotionReason = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
Url = Annotated[str, StringConstraints(max_length=2048, pattern=r"^https?://\S+$")]
Vector = list[float]


def _trimmed_query(value: str) -> str:
    """Search queries and questions: trimmed, then 1..``MAX_QUERY_CHARS`` characters. The error's
    path names the field as the caller sent it (``q``, ``query``, ``question``): the message does
    not name it again (a query parameter's validator is told no field name at all)."""
    value = value.strip()
    if not value:
        raise ValueError("must not be empty")
    if len(value) > MAX_QUERY_CHARS:
        raise ValueError(f"must be at most {MAX_QUERY_CHARS} characters")
    return value


QueryText = Annotated[str, AfterValidator(_trimmed_query)]


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]")


def _not_a_number(value: object) -> object:
    """A time is an ISO-8601 string (or a datetime in Python), never a number of seconds: not even
    as a string (``"1700000000"``), which pydantic would otherwise read as Unix time in UTC."""
    if isinstance(value, int | float) or (isinstance(value, str) and not _ISO_DATE.match(value.strip())):
        raise ValueError("must be an ISO-8601 date-time with a zone (2025-12-12T10:00:00Z)")
    return value


def _within_utc_years(value: datetime) -> datetime:
    """Stores keep UTC: a time whose UTC value leaves years 1..9999 could be stored but never read."""
    try:
        value.astimezone(UTC)
    except OverflowError:
        raise ValueError("must fall within years 1..9999 in UTC") from None
    return value


# Timezone-aware, given as a string, and representable in UTC.
Timestamp = Annotated[AwareDatetime, BeforeValidator(_not_a_number), AfterValidator(_within_utc_years)]

# When an observation may have occurred: from the Unix epoch (nothing the sources we read record is
# older, and a C observation that old would be acknowledged, then purged by the next maintenance)
# to the last instant the stores can read back (UTC year 9999).
EARLIEST_OCCURRED_AT = datetime(1970, 1, 1, tzinfo=UTC)


def _not_before_the_epoch(value: datetime) -> datetime:
    if value < EARLIEST_OCCURRED_AT:
        raise ValueError("must be 1970-01-01T00:00:00Z or later")
    return value


OccurredAt = Annotated[Timestamp, AfterValidator(_not_before_the_epoch)]


# --------------------------------------------------------------------------- search

_OFFSET = re.compile(r"^([+-])(\d{2}):(\d{2})$")


def zone_of(name: str) -> tzinfo:
    """The time zone an IANA name (``Europe/Paris``) or a fixed offset (``-08:00``) names."""
    offset = _OFFSET.match(name)
    if offset:
        sign, hours, minutes = offset.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes))
        if delta >= timedelta(hours=24):
            raise ValueError("an offset must be less than 24 hours")
        return timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError("must be an IANA time zone name (Europe/Paris) or an offset (-08:00)") from None


SlugList = Annotated[list[Slug], Field(min_length=1, max_length=MAX_FILTER_VALUES)]
ActorList = Annotated[list[ActorName], Field(min_length=1, max_length=MAX_FILTER_VALUES)]
TierList = Annotated[list[Tier], Field(min_length=1, max_length=MAX_FILTER_VALUES)]

MetadataKey = Annotated[str, StringConstraints(min_length=1, max_length=100)]


def _metadata_scalar(value: object) -> object:
    """A metadata filter value: kept as its JSON type (``true`` is not ``1``, nor ``"1"``)."""
    if isinstance(value, str) and len(value) <= MAX_METADATA_VALUE_CHARS:
        return value
    if isinstance(value, bool) or (isinstance(value, int) and abs(value) <= MAX_EXACT_INTEGER):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise ValueError(
        f"must be a string (at most {MAX_METADATA_VALUE_CHARS} characters), a finite number "
        f"(integers within ±2^53) or a boolean"
    )


MetadataValue = Annotated[
    bool | int | float | str, PlainValidator(_metadata_scalar, json_schema_input_type=bool | int | float | str)
]
MAX_FILTER_GROUPS = 10
