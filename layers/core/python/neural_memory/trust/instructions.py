"""Instruction-like text in a memory: what addresses an AI agent or tells its reader to run, fetch,
install, exfiltrate or hide something, and invisible text.

A memory holds text written by people outside the team (a pull request body, an issue, a
comment); the hooks, the MCP tools and the LLM prompts hand recalled text to models that can run
shell commands. Such text is found here as *segments* (a line, a sentence of a long line, an HTML
comment, a fenced code block), so ``relay`` can withhold just those and keep the rest.

Two strengths, because engineering history is full of look-alikes ("Run `pip install -e .`
before the tests", "Skip the flaky test on Windows", a shell example in a code block):

- *strong* on its own: an override ("ignore previous instructions"), a note addressed to an AI
  agent, a role tag or chat-template token, concealment ("do not tell the user"), exfiltration
  of secrets to somewhere, running what a URL serves (``curl … | sh``) outside a code block,
  writing to ``authorized_keys`` or ``sudoers``;
- *weak*, withheld only in a text that also has a strong segment: a command in a code block
  fetched and run, installing from a URL, disabling checks, editing ``.env``, "before you do
  anything, run …". An HTML comment is hidden from whoever reads the rendered text, so what is
  weak elsewhere is strong there.

Matching reads a normalised copy (invisible characters out, NFKC, case folded, and the spaced
and digit-for-letter spellings folded back), so ``i g n o r e`` and ``1gn0re`` read as words.
Invisible characters are stripped before anything reaches a model (``strip_invisible``); Unicode
tag characters and bidirectional overrides flag the memory as ``hidden-text`` on their own, and
what tag characters spell is read too."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from neural_memory.trust.instruction_patterns import REMOTE_RUN, STRONG, WEAK
from neural_memory.trust.instruction_words import WORDS
from neural_memory.trust.literal_rule import LiteralRule, vocabulary, words_in

INSTRUCTIONS = "instructions"
HIDDEN_TEXT = "hidden-text"

# Zero-width and formatting characters, bidirectional marks and overrides, Unicode tag characters.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
# What no honest commit or pull request needs: tag characters (they can spell a whole text no one
# sees) and bidirectional embeddings, overrides and isolates (they make text read otherwise).
_HIDING = re.compile("[\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f\U000e0100-\U000e01ef]")
_TAGS = re.compile("[\U000e0020-\U000e007e]+")


def strip_invisible(text: str) -> str:
    """``text`` without the characters a reader cannot see."""
    return _INVISIBLE.sub("", text)


def hides_text(text: str) -> bool:
    """Whether ``text`` carries tag characters or bidirectional overrides."""
    return _HIDING.search(text) is not None


def spelled_by_tags(text: str) -> str:
    """What the Unicode tag characters in ``text`` spell (each is an ASCII letter plus U+E0000)."""
    return " ".join("".join(chr(ord(c) - 0xE0000) for c in run) for run in _TAGS.findall(text))


FLAGS = re.IGNORECASE | re.MULTILINE
SOURCES = (*(pattern for _, pattern in STRONG), "|".join(REMOTE_RUN), *(pattern for _, pattern in WEAK))
_STRONG_RE = [(kind, LiteralRule.of(pattern, FLAGS, WORDS)) for kind, pattern in STRONG]
_REMOTE_RUN_RE = LiteralRule.of("|".join(REMOTE_RUN), FLAGS, WORDS)
_WEAK_RE = [(kind, LiteralRule.of(pattern, FLAGS, WORDS)) for kind, pattern in WEAK]
_EVERY = [pattern for _, pattern in _STRONG_RE] + [_REMOTE_RUN_RE] + [pattern for _, pattern in _WEAK_RE]
_VOCABULARY = vocabulary(_EVERY)

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
LONG_LINE = 300  # a line longer than this is judged sentence by sentence
_SPACED = re.compile(r"\b(?:[^\W\d_][ .\-_*]){2,}[^\W\d_]\b")
_LEETSPEAK = re.compile(r"[a-z][0134578@$!]+[a-z]|\b[0134578][a-z]{2,}")  # "1gn0re", "pr3v10us"
_BACKWARDS = re.compile(r"\b(?:eht|dna|uoy|siht|lla|snoitcurtsni|erongi|lruc)\b")  # common words reversed
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"})
_HOMOGLYPH = str.maketrans(
    {"а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ѕ": "s", "ј": "j", "ԁ": "d"}
)
_SMALL_CAPS = str.maketrans(dict(zip("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ", "abcdefghijklmnopqrstuvwyz", strict=True)))
_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "`": "`"})


@dataclass(frozen=True, slots=True)
class Segment:
    """A part of a text judged as one: ``text[start:end]``, and what was found in it."""

    start: int
    end: int
    kinds: tuple[str, ...]


def flags_of(text: str) -> list[str]:
    """What a stored memory is flagged for: ``instructions`` (a segment ``instruction_segments``
    withholds) and ``hidden-text`` (tag characters or bidirectional overrides)."""
    flags = []
    if instruction_segments(strip_invisible(text)) or _spelled_instructions(text):
        flags.append(INSTRUCTIONS)
    if hides_text(text):
        flags.append(HIDDEN_TEXT)
    return flags


def _spelled_instructions(text: str) -> bool:
    spelled = spelled_by_tags(text)
    return bool(spelled) and bool(instruction_segments(spelled))


def instruction_segments(text: str) -> list[Segment]:
    """The segments of ``text`` (invisible characters already stripped) to withhold, in order: of
    a line found, from its first sentence that says something itself to its end (the line whole
    when no sentence does alone)."""
    if not _says_anything(text):  # nearly every text: one pass of each pattern, no segments
        return []
    judged = [(carrier, *_judge(text, start, end, carrier)) for start, end, carrier in _segments(text)]
    if "-\n" in text:  # words hyphenated across lines ("ig-\nnore all pre-\nvious"): read joined, withheld whole
        whole = _judge(text.replace("-\n", ""), 0, len(text) - text.count("-\n") * 2, "text")
        if whole[1]:
            return [Segment(0, len(text), whole[2])]
    attack = any(strong for _, _, strong, _ in judged)
    withheld = []
    for carrier, segment, strong, kinds in judged:
        if not kinds or not (strong or attack):
            continue
        parts = [_judge(text, a, b, carrier)[0] for a, b in _sentences(text, segment.start, segment.end)]
        first = next((n for n, part in enumerate(parts) if part.kinds), None) if carrier == "text" else None
        if first is None:  # what the line says spans its sentences: all of it
            withheld.append(segment)
        else:  # what leads up to the instruction stays; from it on, nothing
            withheld.append(Segment(parts[first].start, segment.end, tuple(k for p in parts for k in p.kinds)))
    return withheld


def _says_anything(text: str) -> bool:
    """Whether any pattern, strong or weak, matches anywhere in ``text`` read as segments are (each
    sentence begins a line): a segment can match only if this does."""
    readings = _normalised(_SENTENCE.sub("\n", text.replace("-\n", "")))
    for reading in readings:
        present = words_in(reading, _VOCABULARY)
        if any(rule.search(reading, present) for rule in _EVERY):
            return True
    return False


def _judge(text: str, start: int, end: int, carrier: str) -> tuple[Segment, bool, tuple[str, ...]]:
    """A segment, whether it is strong, and the kinds found (strong and weak)."""
    normal = [(reading, words_in(reading, _VOCABULARY)) for reading in _normalised(text[start:end])]
    strong = [kind for kind, rule in _STRONG_RE if any(rule.search(*v) for v in normal)]
    if carrier != "code" and any(_REMOTE_RUN_RE.search(*v) for v in normal):
        strong.append("remote-run")
    weak = [kind for kind, rule in _WEAK_RE if any(rule.search(*v) for v in normal)]
    if carrier == "comment" and weak:  # hidden from whoever reads the rendered text
        strong.extend(weak)
    kinds = tuple(dict.fromkeys([*strong, *weak]))
    return Segment(start, end, kinds), bool(strong), kinds


def _normalised(segment: str) -> list[str]:
    """The readings of a segment matched: as written (NFKC, case folded, quotes straightened,
    look-alike letters folded), and, only when the text shows such a spelling (so most texts are
    read once), with spaced-out letters joined, digits read as letters, backwards, and squashed."""
    plain = unicodedata.normalize("NFKC", segment).translate(_QUOTES).translate(_HOMOGLYPH).translate(_SMALL_CAPS)
    plain = plain.casefold()
    joined = re.sub(r"[ \t]+", " ", _SPACED.sub(lambda m: re.sub(r"[ .\-_*]", "", m.group(0)), plain))
    plain = re.sub(r"[ \t]+", " ", plain)
    readings = [plain]
    if joined != plain:
        readings.append(joined)
    if _LEETSPEAK.search(joined):
        readings.append(joined.translate(_LEET))
    if _BACKWARDS.search(plain):  # written backwards ("snoitcurtsni suoiverp erongi")
        readings.append(plain[::-1])
    if _SPACED.search(plain):  # spaced out, punctuation and all ("c u r l  h t t p : / /"): read squashed
        readings.append(re.sub(r"\s+", "", plain))
    return readings


def _segments(text: str) -> list[tuple[int, int, str]]:
    """(start, end, carrier) of each segment: fenced code blocks (``code``) and HTML comments
    (``comment``) whole, the rest line by line, a long line sentence by sentence (``text``)."""
    blocks = sorted(
        [(m.start(), m.end(), "code") for m in _FENCE.finditer(text)]
        + [(m.start(), m.end(), "comment") for m in _COMMENT.finditer(text)]
    )
    segments: list[tuple[int, int, str]] = []
    at = 0
    for start, end, carrier in blocks:
        if start < at:  # a comment inside a code block (or the reverse): the outer one holds it
            continue
        segments.extend(_lines(text, at, start))
        segments.append((start, end, carrier))
        at = end
    segments.extend(_lines(text, at, len(text)))
    return segments


def _lines(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    for line in re.finditer(r"[^\n]+", text[start:end]):
        a, b = start + line.start(), start + line.end()
        pieces = [(a, b)] if b - a <= LONG_LINE else _sentences(text, a, b)
        found.extend((x, y, "text") for x, y in pieces)
    return found


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text[start:end]``."""
    found, cut = [], start
    for boundary in _SENTENCE.finditer(text, start, end):
        found.append((cut, boundary.start()))
        cut = boundary.end()
    found.append((cut, end))
    return found
