"""Text the user marked ``<private>…</private>``: removed by the hook before anything leaves the
machine, so it is never sent, stored, embedded or logged (the reading is
``redaction.private``'s, the server's own)."""

from __future__ import annotations

from neural_memory.redaction.private import without_private


def strip_private(text: str) -> str:
    """``text`` without its private spans (each replaced by ``[redacted:private]``)."""
    return without_private(text)[0]
