"""A compiled pattern with the words it cannot match without, so most texts are turned away by a
substring test instead of a regular-expression scan (nearly every engineering text matches none of
``instruction_patterns``, whose ninety scans were half the cost of writing a commit message).

The words are read from the pattern itself (``re``'s parser): a sequence needs each of its
mandatory parts, an alternation one of its branches, so the sets are a necessary condition of a
match, never a guess; a pattern with none is always scanned."""

from __future__ import annotations

import hashlib
import re
from re import _constants as sre  # the parser's opcodes (stdlib, 3.11+)
from re import _parser
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


class LiteralRule:
    """A pattern (compiled on first need) and, for each of its top-level alternatives, the
    lower-case words a text that alternative matches holds: one of each set (none: always scanned)."""

    __slots__ = ("_compiled", "flags", "source", "words")

    def __init__(self, source: str, flags: int, words: tuple[tuple[frozenset[str], ...], ...]) -> None:
        self.source, self.flags, self.words = source, flags, words
        self._compiled: re.Pattern[str] | None = None

    @classmethod
    def of(cls, source: str, flags: int, table: Mapping[str, Words] | None = None) -> LiteralRule:
        """The rule, its words from ``table`` (``instruction_words``, made ahead) when it has them."""
        listed = (table or {}).get(key_of(source))
        words = required_words(source, flags) if listed is None else _frozen(listed)
        return cls(source, flags, words)

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:  # most rules are never scanned in a process: their words never occur
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    def search(self, text: str, present: frozenset[str]) -> bool:
        """Whether the pattern matches in ``text`` (case folded, as the words are), whose words of
        every rule's sets are ``present`` (``words_in``)."""
        if self.words and not any(all(not words.isdisjoint(present) for words in alt) for alt in self.words):
            return False
        return self.pattern.search(text) is not None


Words = list[list[list[str]]]  # a rule's words as the table lists them


def key_of(source: str) -> str:
    """A pattern's key in the table of words (its text's digest: an edited pattern has another)."""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def listed(words: tuple[tuple[frozenset[str], ...], ...]) -> Words:
    """A rule's words as the table lists them (sorted: the file does not change run to run)."""
    return [[sorted(w) for w in alt] for alt in words]


def _frozen(words: Words) -> tuple[tuple[frozenset[str], ...], ...]:
    return tuple(tuple(frozenset(w) for w in alt) for alt in words)


def vocabulary(rules: list[LiteralRule]) -> tuple[str, ...]:
    """Every word the rules' sets name."""
    return tuple(sorted({word for rule in rules for alt in rule.words for words in alt for word in words}))


def words_in(text: str, vocabulary: tuple[str, ...]) -> frozenset[str]:
    """The words of ``vocabulary`` that ``text`` holds (one substring test each)."""
    return frozenset(word for word in vocabulary if word in text)


def required_words(source: str, flags: int = 0) -> tuple[tuple[frozenset[str], ...], ...]:
    """For each top-level alternative of ``source``, sets of words (lower case): every match of
    that alternative contains one word of each set. Empty when some alternative needs none."""
    try:
        parsed = list(_parser.parse(source, flags))
    except (re.error, RecursionError):
        return ()
    alternatives = parsed[0][1][1] if len(parsed) == 1 and parsed[0][0] is sre.BRANCH else [parsed]
    found = []
    for alternative in alternatives:
        needed = set(_needed(alternative))
        if not needed:
            return ()
        # the most selective first (the set whose shortest word is longest), so a text fails fast
        found.append(tuple(sorted(needed, key=lambda words: (-min(map(len, words)), sorted(words)))))
    return tuple(found)


def _needed(items: Any) -> list[frozenset[str]]:
    """What a sequence needs: each of its mandatory parts' sets (a run of literals is one word)."""
    needed: list[frozenset[str]] = []
    run: list[str] = []
    for op, value in items:
        if op is sre.LITERAL:
            run.append(chr(value).lower())
            continue
        if run:
            needed.append(frozenset(["".join(run)]))
            run = []
        if op is sre.SUBPATTERN:
            needed += _needed(value[-1])
        elif op is sre.BRANCH:  # one of the branches: a word of any branch's best set
            branches = [_best(_needed(branch)) for branch in value[1]]
            if all(branches):
                needed.append(frozenset().union(*branches))  # type: ignore[arg-type]
        elif op in _REPEATS and value[0] >= 1:
            needed += _needed(value[2])
        elif op is sre.ATOMIC_GROUP:
            needed += _needed(value)
    if run:
        needed.append(frozenset(["".join(run)]))
    return [words for words in needed if words and all(words)]


def _best(needed: list[frozenset[str]]) -> frozenset[str] | None:
    """The most selective of a branch's sets (the one whose shortest word is longest)."""
    return max(needed, key=lambda words: min(map(len, words)), default=None)
