"""Write the engineering-events dev set: ``events.jsonl`` (EventBridge events, the normalizers'
inputs, in the order they happened) and ``queries.json`` (the clock, and labelled questions with
the tier each targets and the ids that answer it), both checked in next to this script.

    python -m bench.engineering_events.generate            # rewrite both files
    python -m bench.engineering_events.generate --check    # exit 1 if they differ from a fresh run

Before writing, every event goes through the real normalizers and every label is checked
against what they produce: each relevant id exists, is of the tier its question targets, is not
superseded, and a C (collaborative) one is still live at the clock (C expires 7 days after it
occurred). A DEV set: tuning on it is allowed; the design's targets are judged on it.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.engineering_events.team import CHORES, NOW, START, WEEKS, routine
from bench.engineering_events.timeline import Tier, Timeline

FOLDER = Path(__file__).resolve().parent
SEED = 26
NAME = "engineering-events"


# The tiers the set's questions were labelled under (the design's first policy: merged pull
# requests C); the evaluation applies them to the set's workspace (``tierPolicy``).
SET_POLICY: dict[str, Tier] = {"pull_request_merged": "C"}


def build() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The events, sorted by when they happened, and the labels (``queries.json``'s content)."""
    first = _play(Timeline(START, SEED))  # to learn when each issue and pull request is opened
    timeline = _play(Timeline(START, SEED, numbering=first.chronological_numbers()))
    events = [envelope for _, envelope in sorted(timeline.events, key=lambda pair: pair[0])]
    labels = {
        "name": NAME,
        "split": "dev",
        "now": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "workspace": "harborlabs",
        "tierPolicy": SET_POLICY,
        "queries": [{"id": q.id, "text": q.text, "tier": q.tier, "relevant": q.relevant} for q in timeline.queries],
    }
    check(events, labels)
    return events, labels


def _play(timeline: Timeline) -> Timeline:
    chores = list(CHORES)
    for number, week in enumerate(WEEKS):
        week(timeline)
        routine(timeline, number, chores)
    return timeline


def check(events: list[dict[str, Any]], labels: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming the first label the normalizers' output contradicts."""
    from neural_memory.domain.tiers import DEFAULT_POLICY, expiry_for, tier_for
    from neural_memory.ingest.prepare import observation_id
    from neural_memory.local.ingest.files import load_document

    found: dict[str, tuple[str, Any]] = {}
    superseded: set[str] = set()
    for n, event in enumerate(events):
        loaded = load_document(event, f"event {n}")
        if loaded.error:
            raise ValueError(f"event {n} does not normalize: {loaded.error}")
        for observation in loaded.observations:
            tier = tier_for(observation.observation_type, observation.tier, {**DEFAULT_POLICY, **SET_POLICY})
            found[observation_id(observation)] = (tier, expiry_for(tier, observation.occurred_at, 7.0))
            superseded.update(observation.supersedes or [])
    for query in labels["queries"]:
        for relevant in query["relevant"]:
            if relevant not in found:
                raise ValueError(f"{query['id']}: {relevant} is not an observation of the events")
            its_tier, expires = found[relevant]
            if its_tier != query["tier"]:
                raise ValueError(f"{query['id']} targets {query['tier']} but {relevant} is {its_tier}")
            if relevant in superseded:
                raise ValueError(f"{query['id']}: {relevant} is superseded, so never returned")
            if expires is not None and expires <= NOW:
                raise ValueError(f"{query['id']}: {relevant} expired at {expires} (clock {NOW})")
    if any(expires is not None and expires > NOW + timedelta(days=7) for _, expires in found.values()):
        raise ValueError("an observation occurred after the clock")


def render(events: list[dict[str, Any]], labels: dict[str, Any]) -> dict[str, str]:
    """The two files' text."""
    return {
        "events.jsonl": "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events),
        "queries.json": json.dumps(labels, indent=1, ensure_ascii=False) + "\n",
    }


def main(argv: list[str] | None = None) -> int:
    """Write the files (or, with ``--check``, compare them)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the checked-in files differ from a fresh run")
    parser.add_argument("--out", type=Path, default=FOLDER, help="folder to write (default: next to this script)")
    args = parser.parse_args(argv)
    events, labels = build()
    files = render(events, labels)
    if args.check:
        stale = [name for name, text in files.items() if (args.out / name).read_text(encoding="utf-8") != text]
        for name in stale:
            print(f"{args.out / name} differs from a fresh run", file=sys.stderr)
        return 1 if stale else 0
    for name, text in files.items():
        (args.out / name).write_text(text, encoding="utf-8")
    tiers = {tier: sum(q["tier"] == tier for q in labels["queries"]) for tier in "ACE"}
    print(f"{len(events)} events, {len(labels['queries'])} queries {tiers} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
