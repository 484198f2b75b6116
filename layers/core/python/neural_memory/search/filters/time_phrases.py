"""Implicit filters (``autoFilters``): time phrases in a query become a date range, offline.

"what did alice push last week" asks for last week's observations; a search that ranks the words
"last week" finds whatever mentions weeks. Recognised phrases are taken out of the query text
and turned into ``dateRange`` bounds, resolved against the request time on the client's clock
(``timeZone``, UTC by default; weeks start on Monday):

- ``today``, ``yesterday``, ``this``/``last`` ``week``/``month``/``year``;
- ``last``/``past`` N ``days``/``weeks``/``months`` (also "in the last 3 days");
- ``since`` a weekday or a month (the latest one not after today), ``on`` a weekday (the latest
  one before today), ``in``/``during`` a month (the latest one that has begun).

Only the first time phrase counts: a query naming two periods is ambiguous, and the second is
left in the text. A phrase inside a longer word never matches.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from neural_memory.models import AutoFiltersStatus, SearchFilters

if TYPE_CHECKING:
    from neural_memory.models import SearchRequest

_WEEKDAYS = {name.lower(): n for n, name in enumerate(calendar.day_name)}
_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30}
_WEEKDAY = "|".join(_WEEKDAYS)
_MONTH = "|".join(_MONTHS)
_PHRASE = re.compile(
    r"\b(?:"
    r"(?P<day>today|yesterday)"
    r"|(?P<which>this|last) (?P<period>week|month|year)"
    r"|(?:in the )?(?:last|past) (?P<count>\d{1,3}) (?P<unit>days?|weeks?|months?)"
    rf"|since (?P<since_day>{_WEEKDAY})"
    rf"|since (?P<since_month>{_MONTH})"
    rf"|on (?P<on_day>{_WEEKDAY})"
    rf"|(?:in|during) (?P<in_month>{_MONTH})"
    r")\b",
    re.IGNORECASE,
)
_END = timedelta(microseconds=1)


@dataclass(frozen=True)
class TimePhrase:
    """A recognised phrase, the range it means (inclusive; ``end`` None: up to now) and the query
    without it."""

    phrase: str
    start: datetime
    end: datetime | None
    remaining: str


def find_time_phrase(query: str, now: datetime) -> TimePhrase | None:
    """The first time phrase of ``query`` resolved against ``now`` in its own zone (days and
    weeks begin at that zone's midnight), or None."""
    match = _PHRASE.search(query)
    if match is None:
        return None
    start, end = _resolve(match, now)
    remaining = " ".join((query[: match.start()] + " " + query[match.end() :]).split())
    return TimePhrase(phrase=match.group(0), start=start, end=end, remaining=remaining)


def narrowed(request: SearchRequest, now: datetime) -> tuple[SearchRequest, AutoFiltersStatus] | None:
    """The request with its time phrase turned into ``filters.dateRange`` (and taken out of the
    query), or None when there is none or the client already gave a date range (theirs wins)."""
    if request.filters is not None and request.filters.date_range is not None:
        return None
    found = find_time_phrase(request.query, request.local_time(now))
    if found is None or not found.remaining:
        return None
    inferred = {"dateRange": date_bounds(found.start, found.end)}
    return with_inferred(request, inferred, found.remaining, phrases=[found.phrase], by="rules")


def with_inferred(
    request: SearchRequest, inferred: dict[str, Any], query: str, *, phrases: list[str], by: Literal["llm", "rules"]
) -> tuple[SearchRequest, AutoFiltersStatus] | None:
    """The request narrowed by ``inferred`` (wire-named filters) and searching ``query``; a filter
    the client gave wins over an inferred one of the same name. None if nothing is left to apply."""
    wire = request.filters.model_dump(by_alias=True, exclude_none=True) if request.filters is not None else {}
    applied = {name: value for name, value in inferred.items() if value and name not in wire}
    if not applied or not query.strip():
        return None
    merged = SearchFilters.model_validate({**wire, **applied})
    status = AutoFiltersStatus(
        applied_filters=SearchFilters.model_validate(applied), phrases=phrases, query=query, fell_back=False, by=by
    )
    return request.model_copy(update={"filters": merged, "query": query}), status


def date_bounds(start: datetime | None, end: datetime | None) -> dict[str, datetime]:
    return {key: value for key, value in (("start", start), ("end", end)) if value is not None}


def _resolve(match: re.Match[str], now: datetime) -> tuple[datetime, datetime | None]:
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    groups = {key: value.lower() for key, value in match.groupdict().items() if value}
    if "day" in groups:
        if groups["day"] == "today":
            return today, None
        return today - timedelta(days=1), today - _END
    if "period" in groups:
        return _period(groups["period"], groups["which"] == "last", today)
    if "count" in groups:
        return now - timedelta(days=int(groups["count"]) * _UNITS[groups["unit"]]), None
    if "since_day" in groups:
        return today - timedelta(days=(today.weekday() - _WEEKDAYS[groups["since_day"]]) % 7), None
    if "since_month" in groups:
        return _latest_month(_MONTHS[groups["since_month"]], today)[0], None
    if "on_day" in groups:
        day = today - timedelta(days=(today.weekday() - _WEEKDAYS[groups["on_day"]] - 1) % 7 + 1)
        return day, day + timedelta(days=1) - _END
    start, after = _latest_month(_MONTHS[groups["in_month"]], today)
    return start, after - _END


def _period(period: str, last: bool, today: datetime) -> tuple[datetime, datetime | None]:
    if period == "week":
        start = today - timedelta(days=today.weekday())
        return (start - timedelta(days=7), start - _END) if last else (start, None)
    if period == "month":
        start = today.replace(day=1)
        if not last:
            return start, None
        return (start - timedelta(days=1)).replace(day=1), start - _END
    start = today.replace(month=1, day=1)
    return (start.replace(year=start.year - 1), start - _END) if last else (start, None)


def _latest_month(month: int, today: datetime) -> tuple[datetime, datetime]:
    """The first moment of the latest ``month`` that has begun, and of the month after it."""
    year = today.year if month <= today.month else today.year - 1
    start = today.replace(year=year, month=month, day=1)
    after = start.replace(year=year + 1, month=1) if month == 12 else start.replace(month=month + 1)
    return start, after
