"""What counts as a secret in a text: where each one is, and of what kind (``find_secrets``).

The patterns (``redaction/patterns.py``, ``redaction/contextual_patterns.py``) are Yelp's
``detect-secrets`` (a maintained library made for this: its provider plugins' regular expressions,
its keyword plugin's assignments, its false-positive filters) and ours for what it lacks; what a
found value must look like to count is ``redaction/values.py``. No entropy-only guess over all
text is made: the library's high-entropy plugins would take commit SHAs, UUIDs, content hashes and
base64 fixtures, which engineering history is full of. A value is a secret by its shape (a
provider's prefix, glued to a word or not: ``redaction/glued.py``), by what names it, or, assigned
to a name that says nothing else about it, by being random the way issued keys are
(``redaction/random_values.py``). Percent-encoded text is read decoded too (``redaction/percent.py``).

Measured on two labelled sets, one written blind to these patterns (``python -m
bench.secrets_detection``, ``python -m bench.secrets_holdout``; docs/benchmarks.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from neural_memory.redaction import percent, values
from neural_memory.redaction.contextual_patterns import CONTEXTUAL
from neural_memory.redaction.glued import GLUED
from neural_memory.redaction.patterns import PROVIDERS, Pattern, keyword_patterns, library_patterns
from neural_memory.redaction.random_values import assigned_random

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["Finding", "find_secrets"]

_QUOTES = "\"'`"
RANDOM_VALUE = "random-value"  # a random value assigned to a name no pattern knows (``random_values``)


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret's place in a text (``text[start:end]``) and its kind, a short slug such as
    ``github-token`` (the placeholder says it; the value is never kept)."""

    kind: str
    start: int
    end: int


@cache
def _patterns() -> tuple[Pattern, ...]:
    """Every pattern, the providers' first (their kind is the more precise where two overlap).
    Built on first use: the library loads only when text is first scanned."""
    return (*PROVIDERS, *library_patterns(), *CONTEXTUAL, *keyword_patterns(), *GLUED)


@cache
def _order() -> dict[str, int]:
    return {p.kind: n for n, p in reversed(list(enumerate(_patterns())))}


def _span(pattern: Pattern, match: re.Match[str]) -> tuple[int, int] | None:
    """Where the secret of a match is: its group (or the whole match, when the group is a prefix
    the library captured), trimmed of the separators a library pattern takes in."""
    group = pattern.group
    if group and (match.group(group) is None or len(match.group(group)) < pattern.min_group):
        group = 0
    start, end = match.span(group)
    text = match.string
    while start < end and text[start] in " \t\r\n=:\"'":
        start += 1
    while end > start and text[end - 1] in " \t\r\n\"'":
        end -= 1
    return (start, end) if end > start else None


def _name(pattern: Pattern, match: re.Match[str]) -> str:
    if pattern.name_group:
        return match.group(pattern.name_group) or ""
    word = re.match(r"[\w-]+", match.string[match.start() :])
    return word.group(0) if word else ""


def _quoted(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` stands between a pair of quotes (a literal, not a name)."""
    return start > 0 and end < len(text) and text[start - 1] in _QUOTES and text[end] == text[start - 1]


@cache
def _by_hint() -> tuple[tuple[tuple[str, frozenset[int]], ...], frozenset[int]]:
    """Each hint with the patterns (by number) it lets run, and the patterns without a hint."""
    index: dict[str, set[int]] = {}
    for n, pattern in enumerate(_patterns()):
        for hint in pattern.hints:
            index.setdefault(hint, set()).add(n)
    always = frozenset(n for n, pattern in enumerate(_patterns()) if not pattern.hints)
    return tuple((hint, frozenset(numbers)) for hint, numbers in index.items()), always


def _matches(text: str) -> Iterator[Finding]:
    lowered = text.lower()
    hinted, always = _by_hint()
    # Each hint looked for once a text; only the patterns a present hint names run, in order.
    running = set(always)
    for hint, numbers in hinted:
        if hint in lowered:
            running |= numbers
    patterns = _patterns()
    for n in sorted(running):
        pattern = patterns[n]
        for match in pattern.regex.finditer(text):
            span = _span(pattern, match)
            if span is None:
                continue
            value = text[span[0] : span[1]]
            if len(set(value)) < values.MIN_DISTINCT:
                continue
            if pattern.check is not None and not pattern.check(value, _quoted(text, *span)):
                continue
            if pattern.name_group is not None and values.about_a_secret(_name(pattern, match)):
                continue
            yield Finding(pattern.kind, *span)


def _all(text: str) -> Iterator[Finding]:
    yield from _matches(text)
    for start, end in assigned_random(text):
        yield Finding(RANDOM_VALUE, start, end)


def _found(text: str) -> list[Finding]:
    """In ``text`` and, when it holds percent-escapes, in the text they decode to (each finding
    mapped back to the escapes it came from)."""
    found = list(_all(text))
    if percent.encoded(text):
        plain, origin = percent.decoded(text)
        found += [Finding(f.kind, origin[f.start][0], origin[f.end - 1][1]) for f in _all(plain)]
    return found


def find_secrets(text: str) -> list[Finding]:
    """The secrets in ``text``, in order, overlapping findings merged into one (of the kind found
    first: a provider's over a generic credential)."""
    if not text:
        return []
    order = _order()
    merged: list[Finding] = []
    for finding in sorted(_found(text), key=lambda f: (f.start, -f.end)):
        if merged and finding.start < merged[-1].end:
            last = merged[-1]
            kind = min((last.kind, finding.kind), key=lambda k: order.get(k, len(order)))
            merged[-1] = Finding(kind, last.start, max(last.end, finding.end))
        else:
            merged.append(finding)
    return merged
