"""Text the user marked ``<private>…</private>``: removed by the hook before anything leaves the
machine, so it is never sent, stored, embedded or logged. An unclosed ``<private>`` hides the
rest of the text (the safe reading of a tag the user forgot to close)."""

from __future__ import annotations

import re

PRIVATE_SPAN = re.compile(r"<\s*private\s*>.*?(?:<\s*/\s*private\s*>|\Z)", re.DOTALL | re.IGNORECASE)
# What stands in its place, so a reader knows something was left out.
REMOVED = "[private]"


def strip_private(text: str) -> str:
    """``text`` without its private spans (each replaced by ``[private]``)."""
    return PRIVATE_SPAN.sub(REMOVED, text)
