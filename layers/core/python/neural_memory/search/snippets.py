"""Query-focused snippets: the window of the text around the first query word it contains."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)


def snippet(text: str, query: str, limit: int) -> str:
    """Up to ``limit`` characters of ``text``, starting shortly before the first query word found,
    cut at word boundaries and marked with an ellipsis where text was left out."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    lowered = text.lower()
    positions = [lowered.find(w) for w in {w.lower() for w in _WORD.findall(query) if len(w) > 2}]
    found = [p for p in positions if p >= 0]
    start = max(0, min(found) - limit // 4) if found else 0
    start = min(start, len(text) - limit)
    if start > 0:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    end = start + limit
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start + limit // 2 else end
    return ("…" if start > 0 else "") + text[start:end].strip() + ("…" if end < len(text) else "")
