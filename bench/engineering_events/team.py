"""Six weeks of a fictional team, Harbor Labs, building Tidewater (appointment booking for
clinics): what GitHub, Vercel and the team's own notes and agent sessions sent, from Monday
28 September to Friday 6 November 2026, and the questions a teammate later asks of it.

Each week is a function that writes its stories in the order they happened and, next to each
story, the questions it answers (``t.query``); the stories themselves are data, one call of the
``Timeline`` a line, in ``team_stories.jsonl`` beside this module (see ``_play_week``).
Questions are worded as someone would ask them days or weeks later, not copied from titles; each
names the tier it targets and every observation of that tier that answers it. Collaborative
(C) observations expire 7 days after they occurred, so C questions are asked only about the last
week (the evaluation's clock is Monday 9 November, 08:00 UTC); the earlier weeks' C observations
stay in the data as what the clock must hide.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.engineering_events.timeline import Timeline

START = datetime(2026, 9, 28, tzinfo=UTC)  # a Monday
NOW = START + timedelta(weeks=6, hours=8)  # Monday 9 November 2026, 08:00 UTC: the evaluation's clock

API = "harborlabs/tidewater-api"
WEB = "harborlabs/tidewater-web"
DOCS = "harborlabs/tidewater-docs"

MAYA = "maya-lin"  # tech lead
TOMAS = "tomas-ruiz"  # backend
PRIYA = "priya-nair"  # frontend
DEVON = "devon-okafor"  # infrastructure
SANA = "sana-qureshi"  # product
JONAS = "jonas-berg"  # full stack
DEPENDABOT = "dependabot[bot]"
AGENT = "harbor-agent"  # the team's coding agent, in conversation sessions


_STORIES = Path(__file__).with_name("team_stories.jsonl")


def _play_week(t: Timeline, week: int) -> None:
    """Play the lines of ``team_stories.jsonl`` for ``week``, in order.

    A line with ``do`` calls that method of ``t`` with its other fields as keyword arguments
    (``query``'s ``relevant`` is its list of ids) and, given ``as``, names the result for later
    lines of the week; a line with ``section`` only heads the lines that follow it. A field's
    value is taken as written, except: ``when`` is ``[day, "HH:MM"]`` of the week (``t.at``);
    ``{"$": "name.attr.key"}`` is a named result (or ``last_deployment``, ``t.last_deployment()``)
    followed through attributes and dictionary keys; ``{"format": text}`` is ``text`` with
    ``{name.attr}`` filled from the named results.
    """
    named: dict[str, Any] = {}
    with _STORIES.open(encoding="utf-8") as lines:
        steps = [step for step in map(json.loads, lines) if step["week"] == week and "do" in step]
    for step in steps:
        fields = {key: _value(t, week, key, raw, named) for key, raw in step.items() if key not in ("week", "as", "do")}
        method = getattr(t, step["do"])
        if step["do"] == "query":
            result = method(fields["text"], fields["tier"], *fields["relevant"])
        else:
            result = method(**fields)
        if "as" in step:
            named[step["as"]] = result


def _value(t: Timeline, week: int, key: str, raw: Any, named: dict[str, Any]) -> Any:
    if key == "when":
        day, clock = raw
        return t.at(week, day, clock)
    if isinstance(raw, list):
        return [_value(t, week, "", item, named) for item in raw]
    if isinstance(raw, dict) and "format" in raw:
        return raw["format"].format_map(named)
    if isinstance(raw, dict):
        root, *path = raw["$"].split(".")
        found = t.last_deployment() if root == "last_deployment" else named[root]
        for part in path:
            found = found[part] if isinstance(found, dict) else getattr(found, part)
        return found
    return raw


def week_0(t: Timeline) -> None:
    """28 Sep – 2 Oct: SMS reminders, the calendar's week view, CI."""
    _play_week(t, 0)


def week_1(t: Timeline) -> None:
    """5 – 9 Oct: double bookings, deposits through Stripe, the bookings reference."""
    _play_week(t, 1)


def week_2(t: Timeline) -> None:
    """12 – 16 Oct: the pilot starts, PostgreSQL 16, keyboard shortcuts, a flaky test."""
    _play_week(t, 2)


def week_3(t: Timeline) -> None:
    """19 – 23 Oct: Outlook calendars, rate limits, Portuguese, feature flags, dashboard 1.0."""
    _play_week(t, 3)


def week_4(t: Timeline) -> None:
    """26 – 30 Oct: the clock change, an outage, on-call."""
    _play_week(t, 4)


def week_5(t: Timeline) -> None:
    """2 – 6 Nov (the live week: C questions are asked about it): waitlist, patient export, slow
    availability, Safari sessions, Node 20, SMS opt-outs, Outlook tokens, on-call noise."""
    _play_week(t, 5)


#: Routine commits straight to main (each deployed when its repository is a Vercel project): the
#: background every question has to be found against. Four a week, drawn without repeats.
CHORES = [
    (API, TOMAS, "Update uv.lock"),
    (API, DEVON, "Bump ruff to 0.7.2 and fix the new lint warnings"),
    (API, TOMAS, "Log request ids in the reminder worker"),
    (API, JONAS, "Remove the unused bookings_v0 view"),
    (API, MAYA, "Tidy up the settings module docstrings"),
    (API, DEVON, "Raise gunicorn workers to 4"),
    (API, DEVON, "Pin boto3 below 1.36"),
    (API, JONAS, "Speed up the bookings fixture in tests"),
    (WEB, PRIYA, "Fix typo on the confirmation page"),
    (WEB, PRIYA, "Update Tailwind to 3.4.14"),
    (WEB, PRIYA, "Tighten spacing in the appointment card"),
    (WEB, JONAS, "Add aria-labels to the calendar navigation buttons"),
    (WEB, PRIYA, "Lazy-load clinician avatars"),
    (WEB, PRIYA, "Preload the Inter font"),
    (WEB, JONAS, "Remove console.log left in the booking form"),
    (DOCS, JONAS, "Fix broken link to the authentication guide"),
    (DOCS, SANA, "Add a FAQ entry about time zones"),
    (DOCS, PRIYA, "Update screenshots of the booking page"),
    (DOCS, SANA, "Spell-check the getting started guide"),
    (DOCS, JONAS, "Document webhook signature verification"),
    (API, TOMAS, "Return 422 with the field name for invalid phone numbers"),
    (WEB, PRIYA, "Show the clinic's logo on the booking page header"),
    (DOCS, JONAS, "Add a page on rate limits and Retry-After"),
    (API, DEVON, "Send structured logs to CloudWatch in JSON"),
]
CHORES_PER_WEEK = 4


def routine(t: Timeline, week: int, chores: list[tuple[str, str, str]]) -> None:
    """``CHORES_PER_WEEK`` chores taken from ``chores`` at seeded times of ``week``."""
    for _ in range(CHORES_PER_WEEK):
        repo, author, message = chores.pop(t.random.randrange(len(chores)))
        clock = f"{t.random.randint(9, 17):02d}:{t.random.randint(0, 59):02d}"
        outcome = "canceled" if t.random.random() < 0.15 else "succeeded"  # superseded by a newer push
        t.push(repo, "main", [message], author, t.at(week, t.random.randint(0, 4), clock), deploy=outcome)


WEEKS = (week_0, week_1, week_2, week_3, week_4, week_5)
