"""What of a memory's text may reach a model: invisible characters stripped, instruction-like
segments (``instructions``) withheld behind a marker naming the memory (a person reviews it with
``GET /v1/observations/{id}`` or the console), and nothing that could close the wrapper it is put
in (Claude Code's ``<system-reminder>``, the hooks' own ``<neural-memory>``, a JSON string).

The stored record is never changed: this is applied where text leaves for a model (the hooks,
the MCP tools' text, the LLM gate's and the answer's prompts)."""

from __future__ import annotations

import re

from neural_memory.trust.instructions import instruction_segments, strip_invisible

WITHHELD = "[withheld: instruction-like text in memory {id}; a person can review it]"
# What could close or open the wrapper recalled text is put in, shown in look-alike brackets a
# model does not read as markup: any closing tag (``</system-reminder>``), a chat template's token
# (``<|im_start|>``), an opening tag of a role or a wrapper (``<system>``). Code keeps its ``<``
# (``a < b``, ``List<str>``).
_CLOSING = re.compile(r"<(\s*/\s*[A-Za-z][^<>\n]{0,80})>?")
_TOKEN = re.compile(r"<(\|[^<>\n]{0,80}\|)>")
_ROLE = re.compile(
    r"<(\s*(?:system|user|assistant|human|developer|instructions?|prompt|tool|function|im_start|im_end|context"
    r"|neural-memory|memory|document|data)\b[^<>\n]{0,80})>?",
    re.IGNORECASE,
)


def relayed(text: str, memory_id: str) -> str:
    """``text`` as a model may read it."""
    visible = strip_invisible(text)
    segments = instruction_segments(visible)
    if segments:
        marker = WITHHELD.format(id=memory_id)
        parts: list[str] = []
        at = 0
        for segment in segments:
            kept = visible[at : segment.start]
            if not (parts and parts[-1] == marker and not kept.strip()):
                parts.extend([kept, marker])
            at = segment.end
        parts.append(visible[at:])
        visible = "".join(parts)
    return unclosable(visible)


def unclosable(text: str) -> str:
    """``text`` with every closing tag, template token and role or wrapper tag in look-alike brackets."""
    for pattern in (_CLOSING, _TOKEN, _ROLE):
        text = pattern.sub(lambda m: f"‹{m.group(1)}›", text)
    return text
