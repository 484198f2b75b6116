"""What the hook's outbox may hold on disk: the turns a capture could not deliver, each one's
content with its secrets replaced by the placeholders the server would write, by the server's own
detectors, loaded only in the detached capture (never in a prompt's hook) and left out where the
hook was installed without them."""

from __future__ import annotations

from typing import Any


def without_secrets(observations: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """What the outbox may hold on disk: each turn's content with its secrets replaced by the
    placeholders the server would write (its own detectors, loaded only here: in the detached
    capture, never in a prompt's hook), and how many were replaced. Without the detectors (a hook
    installed without the server's extra), as they are."""
    try:
        from neural_memory.redaction.observations import redact_text

        held, replaced = [], 0
        for observation in observations:
            content = observation.get("content")
            text, kinds = redact_text(content) if isinstance(content, str) else (content, [])
            held.append({**observation, "content": text} if kinds else observation)
            replaced += len(kinds)
    except ImportError:
        return observations, 0
    return held, replaced
