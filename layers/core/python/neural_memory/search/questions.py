"""A question as people ask it: its frame and its subject.

"why did the reload behaviour change", "who knows about websockets", "when did we start using
watchfiles", "which PR added the proxy argument", "what changed in 2023 about cookies": the
words that frame such a question ("why did", "who knows about", "when did we start", "which
PR", "what changed in 2023 about") are not evidence of anything a record says, and matching them
finds records that share them (documentation, unrelated PRs that say "when"). What they ask for
is what shapes the search instead:

- ``why`` / ``what`` (what changed) / ``which`` (the PR, commit or change that did it) / ``when``
  ask for changes: the records of changes themselves (merged pull requests, decisions, the
  pushes that carried them, releases) are favoured; ``when`` puts the dated change first;
- ``year`` ("what changed in 2023 about X") asks for that year's changes: the search is
  restricted to it (and runs unrestricted when the year holds fewer than it returns);
- ``who`` asks for people: the experts answer, searched with the subject only; asked "lately",
  "these days" or "currently" (``recent``), it asks who knows the subject now, not over the whole
  history.

Read from the question's form alone (a few general rules of English questions, no vocabulary of
any repository), so it works without an LLM; a query that is not a question of these forms (a
keyword query, a claim, a description of a change) is left exactly as it was. Chat memory is
asked the same way ("when did Caroline go to the support group"): there no record is a change,
so only the frame's words leave the lexical query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Candidate

QuestionKind = Literal["why", "when", "which", "what", "year", "who"]

#: The records of changes: what a "why / when / what changed / which PR" question asks for.
CHANGE_TYPES = frozenset({"pull_request_merged", "decision", "adr", "design_note", "push", "release"})
#: Those boosted as a type the query names is: all but pushes. A push that carried a pull request
#: is that PR (``one_per_change``); a push boosted as high put direct pushes sharing a word ahead
#: of the PR that made the change (measured on the question sets: docs/benchmarks.md, issue 45).
FAVOURED = CHANGE_TYPES - {"push"}

_AUX = (
    r"(?:did|does|do|is|are|was|were|has|have|had|would|will|can|could|should|must|"
    r"didn't|doesn't|don't|isn't|aren't|wasn't|weren't|hasn't|haven't|can't|couldn't|won't|shouldn't)"
)
# Present and future auxiliaries: "when is", "when do", "when will" ask about now or what is to come.
_PRESENT_AUX = (
    r"(?:does|do|is|are|will|can|should|must|would|could|"
    r"doesn't|don't|isn't|aren't|won't|can't|shouldn't|wouldn't|couldn't)"
)
_PRONOUN = r"(?:we|you|they|i|it|he|she|people|folks|the team|everyone|one)"
# "start", "begin", "first" only frame when: "when did we start using X" asks when X began.
_ONSET = r"(?:start(?:ed)?|begin|began|first|initially|originally|end up|decide to)"
_CHANGE_NOUN = r"(?:pr|prs|pull[ -]requests?|changes?|commits?|patch(?:es)?|merges?|push(?:es)?|releases?|versions?)"
# Verbs that say only that something was done (the change's own verb, "added" or "fixed", is evidence).
_EMPTY_VERB = (
    r"(?:(?:was|is)\s+it\s+(?:that\s+)?|made|make|makes|did|do|does|was|were|is|caused|causes|brought|led to|"
    r"resulted in|was responsible for)"
)
_PREP = r"(?:about|on|in|with|for|of|to|around|regarding|concerning|re)"
_YEAR = r"(?:19[89]\d|20\d\d)"
# Who knows: the verbs and phrases of asking for a person.
_WHO = (
    r"who(?:'s| is| are|m)?\s+(?:"
    r"(?:else\s+)?knows?(?:\s+(?:the\s+)?most)?|should\s+i\s+(?:ask|talk\s+to|ping|contact)|"
    r"(?:can|could)\s+(?:i|we)\s+(?:ask|talk\s+to|ping)|(?:can|could)\s+(?:help|review|explain)(?:\s+(?:me|us))?(?:\s+with)?|"
    r"(?:are\s+)?(?:the\s+)?experts?|(?:the\s+)?(?:owners?|maintainers?|go-to(?:\s+(?:person|people))?)|"
    r"owns|maintains|understands|wrote(?:\s+most\s+of)?|worked(?:\s+the\s+most)?|has\s+worked|have\s+worked|"
    r"works|working|(?:has|have)\s+been\s+working|"
    r"touched|is\s+familiar\s+with|knows\s+(?:the\s+)?(?:most|best)|"
    r"(?:has|had)\s+(?:the\s+most\s+)?(?:context|experience)|would\s+know|"
    r"(?:do|should|can|could)\s+(?:i|we)\s+(?:ask|talk\s+to|ping|contact|go\s+to)|"
    r"(?:is|are)\s+the\s+(?:best\s+|right\s+)?(?:person|people)\s+to\s+(?:ask|talk\s+to)|"
    r"(?:is|are)\s+the\s+(?:main\s+)?(?:contributors?|authors?|people|person)\s+(?:to|of|behind|on|for)"
    r")(?:\s+(?:most|the\s+most|best))?(?:\s+" + _PREP + r")?\b"
)

_FORMS: tuple[tuple[QuestionKind, str], ...] = (
    ("who", _WHO),
    # what changed in 2023 about X / what did we change in 2023 to X / what happened to X in 2023
    (
        "what",
        r"what\s+(?:(?:has|have|had)\s+)?(?:changed|happened|was\s+changed|were\s+the\s+changes|"
        r"changes\s+were\s+made|did\s+" + _PRONOUN + r"\s+(?:change|do|fix))"
        r"(?:\s+(?:in|during)\s+" + _YEAR + r")?(?:\s+" + _PREP + r")?\b",
    ),
    ("which", r"(?:which|what)\s+" + _CHANGE_NOUN + r"(?:\s+" + _EMPTY_VERB + r")?\b"),
    # "when are flags cleaned up", "when does the cache expire": a schedule or a fact, not a change
    # (unless it asks when something began: "when do we start …").
    (
        "when",
        r"when\s+(?!" + _PRESENT_AUX + r"\s+(?!(?:" + _PRONOUN + r"\s+)?" + _ONSET + r"\b))"
        r"(?:" + _AUX + r"\s+)?(?:" + _PRONOUN + r"\s+)?(?:" + _ONSET + r"\s+)?",
    ),
    ("why", r"why\s+(?:" + _AUX + r"\s+)?(?:" + _PRONOUN + r"\s+)?"),
    # what was the reason for X / what's the reason X / how come X: why
    (
        "why",
        r"(?:what(?:'s|\s+is|\s+was|\s+were)\s+the\s+(?:reasons?|motivation|rationale)\s+(?:for|behind|that|why)?"
        r"|how\s+come)\s*",
    ),
    # how did X change / how was X changed: what changed
    ("what", r"how\s+(?:did|has|have|was|were)\s+(?=.*\b(?:change[sd]?|evolve[sd]?)\b)"),
)
_PATTERNS: tuple[tuple[QuestionKind, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in _FORMS
)
# "tell me", "can you tell me", "do you know", "i wonder": a question's politeness; "in 2023,": its year
_LEAD = re.compile(
    r"^(?:(?:(?:in|during)\s+(?:19[89]\d|20\d\d)|hey|hi|so|ok|okay|please|quick question)[,:]?\s+)*"
    r"(?:(?:can|could)\s+you\s+(?:tell|show)\s+me\s+|"
    r"(?:do\s+you|does\s+anyone)\s+know\s+|i\s+wonder\s+|tell\s+me\s+|show\s+me\s+)?",
    re.IGNORECASE,
)
_IN_YEAR = re.compile(r"\b(?:in|during|through(?:out)?|over)\s+(" + _YEAR + r")\b", re.IGNORECASE)
_TRAILING_CHANGE = re.compile(r"\s+(?:change[sd]?|evolve[sd]?|get\s+changed|happen(?:ed)?)\s*$", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:the|a|an|our|this|that|these|those)\s+", re.IGNORECASE)
# "what changed in how X renders", "what changed so that X": the clause's connector frames it too.
_CONNECTOR = re.compile(r"^(?:how|when|where|whether|why|so\s+that|such\s+that|that)\s+", re.IGNORECASE)
# "who can review changes to X", "who knows how X works", "who worked on X the most"
_WHO_LEAD = re.compile(
    r"^(?:(?:changes?|work|code|things|stuff)\s+(?:to|in|on|for|about|with|around)\s+|how\s+)", re.IGNORECASE
)
_WHO_TAIL = re.compile(r"\s+(?:(?:the\s+)?(?:most|best)|works?|the\s+code|code)$", re.IGNORECASE)
_PUNCT = re.compile(r"^[\s,:;\-]+|[\s?!.,:;\-]+$")
# Who knows it now: the words that ask about the present, as words of the question, not of a name
# ("now-playing", "currently.py", "today's build", "NOW()", a quoted 'recently used'). "today" is
# a time phrase ("who pushed to X today": since midnight), read as a search's autoFilters read it.
_WHO_START = re.compile(r"who\b", re.IGNORECASE)
_RECENTLY = re.compile(
    r"(?<![\w'’.\-])(?:lately|recently|these\s+days|nowadays|currently|right\s+now|at\s+the\s+moment|now)"
    r"(?![\w'’(\-]|\.\w)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Question:
    """How a query reads as a question: what it asks (``kind``), what it is about (``subject``: the
    query without its frame), the year it names, if it asks for one, and whether a ``who``
    question asks about now ("who knows X lately", "who currently maintains X")."""

    kind: QuestionKind
    subject: str
    year: int | None = None
    recent: bool = False

    @property
    def wants_changes(self) -> bool:
        """Whether it asks for changes (every kind but ``who``)."""
        return self.kind != "who"


def read_question(query: str) -> Question | None:
    """The question ``query`` asks, or None when it is not one of these forms (or nothing is left
    once its frame is taken away: "why?" is searched as written)."""
    text = _LEAD.sub("", query.strip(), count=1)
    recent = False
    if _WHO_START.match(text) and _RECENTLY.search(text):  # "who currently owns X": the frame without it
        text, recent = " ".join(_RECENTLY.sub(" ", text).split()), True
    for kind, pattern in _PATTERNS:
        match = pattern.match(text)
        if match is None:
            continue
        rest = text[match.end() :]
        year_match = _IN_YEAR.search(query)  # "in 2023, what changed …" names it before the frame
        year = int(year_match.group(1)) if year_match else None
        if year_match is not None and kind != "who":
            # "in 2023" frames the question; it is not a word any record says.
            rest = _IN_YEAR.sub(" ", rest)
        rest = _PUNCT.sub("", " ".join(rest.split()))
        if kind in ("what", "why", "when"):
            rest = _TRAILING_CHANGE.sub("", rest)  # "how did X change", "why did X change"
        subject = _PUNCT.sub("", rest)
        if kind == "who":
            subject = _WHO_TAIL.sub("", _WHO_LEAD.sub("", subject))
        subject = _ARTICLE.sub("", _CONNECTOR.sub("", subject))
        if not subject:
            return None
        asked: QuestionKind = "year" if year is not None and kind in ("what", "which", "why") else kind
        return Question(kind=asked, subject=subject, year=year, recent=recent and kind == "who")
    return None


def one_per_change(candidates: Sequence[Candidate]) -> list[Candidate]:
    """A merged pull request and the push of its merge commit are one change (the push carried
    it): the first of the two keeps its place, shown as the pull request (its title, author and
    number), the other listed in its ``duplicates``. Other candidates are left as they are."""
    kept: list[Candidate] = []
    at: dict[str, int] = {}
    for candidate in candidates:
        record = candidate.observation
        sha = record.metadata.get("commitSha")
        if not isinstance(sha, str) or record.observation_type not in ("push", "pull_request_merged"):
            kept.append(candidate)
            continue
        n = at.get(sha)
        if n is None or kept[n].observation.observation_type == record.observation_type:
            at.setdefault(sha, len(kept))
            kept.append(candidate)
            continue
        first = kept[n]
        pr, push = (candidate, first) if record.observation_type == "pull_request_merged" else (first, candidate)
        kept[n] = pr.model_copy(
            update={"final": first.final, "duplicates": [*pr.duplicates, push.observation.id, *push.duplicates]}
        )
    return kept
