"""Text marked ``<private>…</private>`` (an agent's and a user's convention for what must not be
kept): never kept. One reading for the Claude Code hook, which removes it before anything leaves
the machine, and for the server, which removes it from every write whoever sent it. Tags are read
leniently (any case, spaces inside the brackets), and an unclosed ``<private>`` hides the rest of
the text: the safe reading of a tag someone forgot to close. The standard library only: the hook
imports this."""

from __future__ import annotations

import re

PRIVATE_SPAN = re.compile(r"<\s*private\s*>.*?(?:<\s*/\s*private\s*>|\Z)", re.DOTALL | re.IGNORECASE)
# What stands in its place, so a reader knows something was left out (a secret's are alike:
# ``[redacted:<kind>]``, ``redaction.observations.placeholder``).
PRIVATE_PLACEHOLDER = "[redacted:private]"


def without_private(text: str) -> tuple[str, int]:
    """``text`` with each private span replaced by ``PRIVATE_PLACEHOLDER``, and how many there were."""
    if "private" not in text.lower():  # most text: no regex run
        return text, 0
    return PRIVATE_SPAN.subn(PRIVATE_PLACEHOLDER, text)
