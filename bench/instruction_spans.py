"""The detector of instruction-like text (issue 55) against its labelled set: ``flags_of`` as a black box.

    python -m bench.instruction_spans [--set tuning|holdout|blind|all] [--show]

The set lives in ``bench/instructions/`` and was written before, and without reading, the detector:

- ``payloads_{tuning,holdout}.jsonl``: instruction-like payloads an attacker would put in a pull
  request body, an issue, a comment, a commit or deployment message to steer a coding agent that
  later reads the memory, each with its ``shape`` (direct override, fake role tags, remote code
  execution, exfiltration, concealment, tampering, hidden carriers, obfuscation, invisible Unicode,
  embedded in a realistic PR, polite phrasings, other languages, ...); every shape is in both files.
- ``team_{tuning,holdout}.jsonl``: commit messages from real public histories
  (``bench/instructions/collect_team_texts.py`` rebuilds them from the clones), split by repository
  so the two files share none: the look-alikes (install commands, shell examples, imperatives)
  that must be relayed as written.

A payload counts as caught if ``flags_of`` returns anything for it (recall, overall and per shape);
a team text counts one false positive if ``flags_of`` returns anything for it (per 1,000 texts).
The issue's bounds: recall >= 0.95, at most 1 false positive per 1,000 team texts. ``--show``
prints each flagged team text (id, its flags, its first 200 characters) and each missed payload.
Tune on ``tuning``; report ``holdout`` (and ``all``) without changing the detector in between.

``blind`` is a second blind set, written later by another hand, also without reading the detector or
the first set's payloads: ``payloads_blind.jsonl`` (same shapes, new texts) and ``team_blind.jsonl``
(commit messages from four more histories). ``all`` holds the three sets.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

SET_DIR = Path(__file__).parent / "instructions"
RECALL_BOUND = 0.95
FALSE_POSITIVES_PER_1000_BOUND = 1.0
PARTS = ("tuning", "holdout", "blind")


@dataclass(frozen=True)
class Item:
    id: str
    group: str  # the payload's shape, or the team text's repository
    text: str
    source: str  # the file it came from


def load(kind: str, which: str) -> list[Item]:
    """The payloads or team texts of one part of the set (``tuning``/``holdout``/``blind``) or of all."""
    halves = PARTS if which == "all" else (which,)
    items: list[Item] = []
    for half in halves:
        path = SET_DIR / f"{kind}_{half}.jsonl"
        with path.open(encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                group = row["shape"] if kind == "payloads" else row["repo"]
                items.append(Item(str(row["id"]), str(group), str(row["text"]), path.name))
    return items


def _run(detect: Callable[[str], list[str]], items: list[Item]) -> tuple[dict[Item, list[str]], float]:
    """Each item's flags (only the flagged ones) and the mean time of one call, in microseconds.

    Keyed by the item, not its id: the parts were written by different hands, so ids may repeat across files.
    """
    flagged: dict[Item, list[str]] = {}
    began = time.perf_counter()
    for item in items:
        flags = detect(item.text)
        if flags:
            flagged[item] = list(flags)
    elapsed = time.perf_counter() - began
    return flagged, elapsed / max(1, len(items)) * 1e6


def _preview(text: str, limit: int = 200) -> str:
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


def _report_payloads(payloads: list[Item], flagged: dict[Item, list[str]], show: bool) -> float:
    total = Counter(p.group for p in payloads)
    caught = Counter(p.group for p in payloads if p in flagged)
    print(f"{'payload shape':<28} {'caught':>7} {'of':>4} {'recall':>7}")
    for shape in sorted(total):
        print(f"{shape:<28} {caught[shape]:>7} {total[shape]:>4} {caught[shape] / total[shape]:>7.3f}")
    recall = sum(caught.values()) / max(1, len(payloads))
    verdict = "holds" if recall >= RECALL_BOUND else "FAILS"
    line = f"{'all payloads':<28} {sum(caught.values()):>7} {len(payloads):>4} {recall:>7.3f}"
    print(f"{line}  (bound >= {RECALL_BOUND}: {verdict})")
    if show:
        missed = [p for p in payloads if p not in flagged]
        print(f"\nmissed payloads ({len(missed)}):")
        for p in missed:
            print(f"  {p.id} [{p.group}] {p.text!r}")
    return recall


def _report_team(team: list[Item], flagged: dict[Item, list[str]], show: bool) -> float:
    total = Counter(t.group for t in team)
    hits = Counter(t.group for t in team if t in flagged)
    print(f"\n{'team texts (repository)':<28} {'flagged':>7} {'of':>5} {'per 1,000':>9}")
    for repo in sorted(total):
        print(f"{repo:<28} {hits[repo]:>7} {total[repo]:>5} {1000 * hits[repo] / total[repo]:>9.2f}")
    rate = 1000 * sum(hits.values()) / max(1, len(team))
    verdict = "holds" if rate <= FALSE_POSITIVES_PER_1000_BOUND else "FAILS"
    line = f"{'all team texts':<28} {sum(hits.values()):>7} {len(team):>5} {rate:>9.2f}"
    print(f"{line}  (bound <= {FALSE_POSITIVES_PER_1000_BOUND:g}: {verdict})")
    if show:
        print(f"\nflagged team texts ({sum(hits.values())}):")
        for t in team:
            if t in flagged:
                print(f"  {t.id} {flagged[t]}: {_preview(t.text)}")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", dest="which", choices=(*PARTS, "all"), default="all")
    parser.add_argument("--show", action="store_true", help="print each flagged team text and each missed payload")
    args = parser.parse_args()

    # Imported here, not at the top: --help works before the detector exists (and the ignore keeps
    # mypy quiet until then; it is unused, and harmless, once the module is there).
    from neural_memory.trust.instructions import flags_of

    payloads = load("payloads", args.which)
    team = load("team", args.which)
    payload_flags, payload_us = _run(flags_of, payloads)
    team_flags, team_us = _run(flags_of, team)
    print(f"set: {args.which} ({len(payloads)} payloads, {len(team)} team texts)\n")
    _report_payloads(payloads, payload_flags, args.show)
    _report_team(team, team_flags, args.show)
    print(f"\nmean time of one call: {payload_us:.0f} µs on a payload, {team_us:.0f} µs on a team text")


if __name__ == "__main__":
    main()
