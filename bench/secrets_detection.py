"""Secret detection on a labelled set (``bench/secrets_corpus.py``, and issue 56's evasions and
look-alikes, ``bench/secrets_evasions.py``): recall per kind and overall,
false positives per 1,000 non-secrets, and the time a text takes.

    python -m bench.secrets_detection [--show]

A secret counts as found when the redacted text no longer holds any of it (the findings cover it
whole); a non-secret text counts as a false positive when anything in it is found. ``--show``
prints every miss and false positive.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

from neural_memory.redaction.detectors import find_secrets

from bench.secrets_corpus import Labelled, non_secrets, secrets
from bench.secrets_evasions import evasion_samples, lookalike_samples


def _issue_56(seed: int = 56) -> tuple[list[Labelled], list[Labelled]]:
    """Issue 56's evasions (kind ``evasion-*``) and look-alikes, from their own seed."""
    from random import Random

    rng = Random(seed)
    evasions = [
        Labelled(s.text, s.category, [s.text[x.start : x.end] for x in s.secrets]) for s in evasion_samples(rng)
    ]
    return evasions, [Labelled(s.text, "none") for s in lookalike_samples(rng)]


def _covered(text: str, secret: str, spans: list[tuple[int, int]]) -> bool:
    start = text.find(secret)
    while start >= 0:
        end = start + len(secret)
        if not any(s <= start and end <= e for s, e in spans):
            return False
        start = text.find(secret, end)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.secrets_detection", description=__doc__)
    parser.add_argument("--show", action="store_true", help="print every miss and false positive")
    args = parser.parse_args()
    evasions, lookalikes = _issue_56()
    positives, negatives = secrets() + evasions, non_secrets() + lookalikes
    find_secrets("warm up")  # the library loads on first use
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    timings = []
    for item in positives:
        started = time.perf_counter()
        findings = find_secrets(item.text)
        timings.append(time.perf_counter() - started)
        spans = [(f.start, f.end) for f in findings]
        total[item.kind] += 1
        if all(_covered(item.text, s, spans) for s in item.secrets):
            found[item.kind] += 1
        elif args.show:
            print(f"MISS {item.kind}: {item.text!r} -> {[(f.kind, item.text[f.start : f.end]) for f in findings]}")
    false_positives = 0
    for item in negatives:
        started = time.perf_counter()
        findings = find_secrets(item.text)
        timings.append(time.perf_counter() - started)
        if findings:
            false_positives += 1
            if args.show:
                print(f"FALSE POSITIVE: {item.text!r} -> {[(f.kind, item.text[f.start : f.end]) for f in findings]}")
    for kind in sorted(total):
        print(f"{kind:24} {found[kind]:4} / {total[kind]:4}  recall {found[kind] / total[kind]:.3f}")
    recall = sum(found.values()) / sum(total.values())
    print(f"secrets: {sum(total.values())} of {len(total)} kinds; recall {recall:.4f}")
    e_found = sum(n for kind, n in found.items() if kind.startswith("evasion-"))
    print(f"evasions (issue 56): {e_found} / {len(evasions)}; look-alikes among the non-secrets: {len(lookalikes)}")
    print(
        f"non-secrets: {len(negatives)}; false positives {false_positives} "
        f"({1000 * false_positives / len(negatives):.2f} per 1,000)"
    )
    p95 = statistics.quantiles(timings, n=20)[-1]
    print(f"time per text: median {statistics.median(timings) * 1e6:.0f} µs, p95 {p95 * 1e6:.0f} µs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
