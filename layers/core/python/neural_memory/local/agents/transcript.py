"""The session's transcript as Claude Code writes it (JSON lines, ``transcript_path`` in the Stop
event): the last prompt the user typed (not a tool's result) and the agent's last text answer,
for a capture whose prompt was not stashed or whose answer the event did not carry."""

from __future__ import annotations

import contextlib
import json
from typing import Any


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def last_turn(path: Any) -> tuple[tuple[str, str], str]:
    """The last prompt the user typed and the agent's last text answer, from the session's
    transcript (JSON lines); ("", "") and why, when it cannot be read."""
    if not path:
        return ("", ""), "no transcript_path"
    prompt = answer = ""
    try:
        with open(str(path), encoding="utf-8", errors="replace") as lines:
            for line in lines:
                with contextlib.suppress(ValueError, AttributeError):
                    entry = json.loads(line)
                    message = entry.get("message") or {}
                    content = message.get("content")
                    if entry.get("type") == "user" and not (
                        isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)
                    ):
                        prompt, answer = _text_of(content) or prompt, ""
                    elif entry.get("type") == "assistant":
                        answer = _text_of(content) or answer
    except OSError as exc:
        return ("", ""), f"transcript unreadable ({exc.strerror or exc})"
    return (prompt, answer), ""
