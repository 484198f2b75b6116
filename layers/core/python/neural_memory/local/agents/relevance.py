"""Whether a prompt's recall can help, decided from evidence: what the prompt is (a write, a word of
steering, a question about the project's past, a request) and how far its best memories stand
above what a prompt unrelated to the workspace scores there.

Cosine similarity alone cannot say it. On a history of a few thousand pull requests and pushes,
"format this file with ruff" finds a PR about ruff at 0.67 while "why did we drop rfc3986?"
finds its PR at 0.56: everything a codebase's chores mention is somewhere in its history. What
separates them is the prompt's form first (a question about a change, a decision, a person or
the project's past asks the memory; an instruction about the code at hand does not) and then the
workspace's own background: the scores prompts about nothing of it reach there (``calibration``:
``CALIBRATION_PROMPTS`` searched once a day per workspace, in a detached process, their best
cosine kept). A prompt that asks about the past needs its best memory above the background's
typical score; any other prompt (a chore, a request) is handed only the team's decisions and
notes (a convention bears on a chore; the changes that share its words do not), and only one
clearly above the background's highest.

The standard library only: it runs in every prompt's hook."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from typing import Any

#: Searched to learn a workspace's background: prompts that ask nothing of any team's history
#: (general programming, steering, chores on the code at hand). Not the benchmark's prompts.
CALIBRATION_PROMPTS = (
    "can you make this function shorter",
    "what is a closure in JavaScript",
    "write a function that reverses a linked list",
    "please fix the failing assertion",
    "how do I read a CSV file line by line",
    "explain how a hash map handles collisions",
    "add error handling around this call",
    "what does the yield keyword do",
    "sort this list of dictionaries by date",
    "convert this class to use dataclasses",
    "how do I set an environment variable in a shell script",
    "extract this block into a helper method",
    "what is the difference between a process and a thread",
    "write a docstring for the parse function",
    "why does my recursive function hit the recursion limit",
    "make the error message more helpful",
    "how do I check if a key exists in a dictionary",
    "add a test case for an empty input",
    "what are the SOLID principles",
    "clean up the imports in this module",
)
CALIBRATION_DAYS = 1  # a workspace's background is learnt again after this long (its memory grows)
# Before a workspace's background is known: what prompts unrelated to two public histories of a few
# thousand PRs scored at their best (median and highest; bench.hook_context's tuning sets).
DEFAULT_TYPICAL = 0.42
DEFAULT_HIGHEST = 0.62
ASKING_MARGIN = 0.05  # a question about the past: its best memory this far above the typical background
OTHER_MARGIN = 0.08  # any other prompt: this far above the background's highest

_REMEMBER = re.compile(
    r"^\W*(?:(?:please|pls|also|and|ok|okay)[\s,]+)?(?:remember\b|note\s+(?:for|to)\b|note\s*:|make\s+a\s+note\b"
    r"|keep\s+in\s+mind\b|don'?t\s+forget\b|do\s+not\s+forget\b|for\s+the\s+record\b|fyi\b|save\s+(?:this|that)\b"
    r"|store\s+(?:this|that)\b|memori[sz]e\b)",
    re.IGNORECASE,
)
# Words that ask about the project's past, its decisions or its people, whatever the question's form.
_ABOUT_THE_PAST = re.compile(
    r"\b(?:why\b|when\s+(?:did|was|were|have|has|had)\b|who\b|whom\b|which\s+(?:pr|pull|commit|change|release"
    r"|version|issue)|what\s+(?:changed|happened|did\s+we|was\s+the\s+reason)|history\s+of\b|decided|decision|"
    r"agreed\s+(?:on|to)\b|we\s+chose\b|reason|rationale|originally|used\s+to\b|last\s+time\b|have\s+we\b|"
    r"did\s+we\b|do\s+we\b|were\s+we\b|our\s+(?:convention|policy|process|approach)|pr\s*#?\d+|#\d{2,}|"
    r"pull\s+request|incident|outage)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z][\w'.-]*")
# Steering words: a prompt of these alone ("ok, go ahead", "looks good, ship it") asks nothing.
_STEERING = frozenset(
    "ok okay yes yeah yep no nope sure thanks thank you great good fine nice perfect cool awesome looks look lgtm "
    "go ahead on continue proceed please do it that this again ship merge push commit run the tests test now then "
    "next keep going stop wait sounds right done agreed let's lets try retry and a an to with".split()
)


def is_remember(prompt: str) -> bool:
    """Whether the prompt tells the agent to remember something: a write, not a question."""
    return bool(_REMEMBER.search(prompt))


def asks_about_the_past(prompt: str, question_kind: str | None) -> bool:
    """Whether the prompt asks about the project's past: the server read a question's frame in it
    (why, when, which change, what changed, who knows), or it has words that ask such things."""
    return bool(question_kind) or bool(_ABOUT_THE_PAST.search(prompt))


def is_steering(prompt: str) -> bool:
    """A few words of steering or acknowledgement, nothing to search for."""
    words = [w.lower().strip(".'") for w in _WORD.findall(prompt)]
    return len(words) <= 8 and all(w in _STEERING for w in words)


class Background:
    """What prompts unrelated to a workspace score at their best there: typical (median) and highest."""

    __slots__ = ("highest", "learnt", "typical")

    def __init__(self, typical: float = DEFAULT_TYPICAL, highest: float = DEFAULT_HIGHEST, learnt: bool = False):
        self.typical = typical
        self.highest = highest
        self.learnt = learnt

    def bar(self, asking: bool, floor: float) -> float:
        """The best memory's cosine a prompt needs for its recall (never under the hook's ``floor``)."""
        return max(floor, self.typical + ASKING_MARGIN if asking else self.highest + OTHER_MARGIN)

    @classmethod
    def of(cls, scores: list[float]) -> Background:
        ordered = sorted(scores)
        if not ordered:
            return cls()
        return cls(ordered[len(ordered) // 2], ordered[-1], learnt=True)


def best_vector(results: list[dict[str, Any]]) -> float:
    """The highest cosine of a reply's results (0 when none was found by meaning)."""
    scores = [(r.get("scores") or {}).get("vector") for r in results if isinstance(r, dict)]
    return max((float(s) for s in scores if isinstance(s, int | float)), default=0.0)


def _file(folder: str, url: str, key: str) -> str:
    """The background's file for a memory and key (the key names the workspace; only a digest is kept)."""
    digest = hashlib.sha256(f"{url}\x00{key}".encode()).hexdigest()[:16]
    return os.path.join(folder, "background", f"{digest}.json")


def read_background(folder: str, url: str, key: str) -> tuple[Background, bool]:
    """The workspace's background as last learnt (defaults before), and whether it is due again."""
    path = _file(folder, url, key)
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        scores = [float(s) for s in document["scores"]]
        age = time.time() - os.path.getmtime(path)
    except (OSError, ValueError, KeyError, TypeError):
        return Background(), True
    return Background.of(scores), age > CALIBRATION_DAYS * 86400


def learn_background(folder: str, url: str, key: str, search: Any) -> int:
    """Search each calibration prompt (``search``: a body -> a reply) and keep their best cosines; how
    many answered. One learner at a time per workspace (a lock file; a second returns 0 at once)."""
    import fcntl

    path = _file(folder, url, key)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path + ".lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0
        scores = []
        for prompt in CALIBRATION_PROMPTS:
            body = {"query": prompt, "topK": 8, "mode": "hybrid", "rerank": "fast", "llmFilter": False}
            with contextlib.suppress(Exception):  # a prompt that fails is one sample less
                scores.append(best_vector(search(body).get("results") or []))
        if scores:
            partial = f"{path}.{os.getpid()}"
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"scores": scores, "prompts": len(CALIBRATION_PROMPTS)}, handle)
            os.replace(partial, path)
        return len(scores)
