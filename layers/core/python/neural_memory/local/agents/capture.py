"""A turn as the memory keeps it: the prompt and the agent's final answer, each a
``conversation_turn`` of the session (Claude Code's session id as ``sessionId``), with the
repository and branch as metadata, private spans removed. Tool output is not captured: only what
the user asked and what the agent answered, and of the answer a long code block (a diff, a log)
is replaced by a line saying how long it was; a decision the agent stated in words stays."""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from neural_memory.local.agents.private_spans import strip_private

if TYPE_CHECKING:
    from neural_memory.local.agents.repository import Repository

SOURCE = "agent"  # as the MCP `remember` tool writes: what an agent's session said, not a person's claim
SOURCE_TYPE = "claude-code"
TURN_TYPE = "conversation_turn"  # models/chat_turns.CHAT_TURN_TYPE (the hook imports the stdlib only)
MAX_TURN_CHARS = 6_000  # a turn's text kept at most (the API allows far more; an answer this long is mostly output)
MAX_CODE_LINES = 30  # a fenced block longer than this is output, not something said
_FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", re.DOTALL | re.MULTILINE)


def turn_text(text: str) -> str:
    """What of a prompt or answer is kept: private spans removed, long code blocks replaced by a
    line saying what was there, at most ``MAX_TURN_CHARS`` characters."""
    kept = _FENCE.sub(_short_block, strip_private(text)).strip()
    if len(kept) > MAX_TURN_CHARS:
        kept = kept[: MAX_TURN_CHARS - 30].rstrip() + " [… cut: the turn was longer]"
    return kept


def _short_block(match: re.Match[str]) -> str:
    block = match.group(0)
    lines = block.count("\n") - 1
    return block if lines <= MAX_CODE_LINES else f"[a code block of {lines} lines, not kept]"


def turn_id(session_id: str, turn_key: str, role: str) -> str:
    """A stable id for one side of one turn: a capture retried writes the same observation."""
    digest = hashlib.sha256(f"{session_id}\x00{turn_key}".encode()).hexdigest()[:16]
    safe = re.sub(r"[^A-Za-z0-9_.:-]", "-", session_id)[:80]
    return f"claude-code-{safe}-{digest}-{role}"


def turn_observations(
    *,
    session_id: str,
    turn_key: str,
    prompt: str,
    prompt_at: str,
    answer: str,
    answer_at: str,
    repository: Repository,
    user: str,
) -> list[dict[str, Any]]:
    """The turn's observations (the prompt's, then the answer's; one that is empty after
    ``turn_text`` is left out), as ``POST /v1/observations`` takes them."""
    metadata: dict[str, Any] = {"repo": repository.name, "agent": SOURCE_TYPE}
    if repository.branch:
        metadata["branch"] = repository.branch
    # Who said it: the person who asked knows what they told the agent (who knows counts them); the
    # agent's own side is an agent's (left out of who knows unless asked for: engineering/experts.py).
    sides = (("prompt", user, "human", prompt, prompt_at), ("answer", "claude-code", "agent", answer, answer_at))
    found = []
    for role, actor, kind, text, at in sides:
        kept = turn_text(text)
        if not kept:
            continue
        found.append(
            {
                "id": turn_id(session_id, turn_key, role),
                "source": SOURCE,
                "sourceType": SOURCE_TYPE,
                "observationType": TURN_TYPE,
                "sessionId": session_id,
                "actorName": actor,
                "occurredAt": at,
                "content": kept,
                "metadata": {**metadata, "actorKind": kind},
            }
        )
    return found


_DECIDED = re.compile(r"\b(?:we\s+)?(?:decided|agreed|chose|settled on|will always|will never)\b", re.IGNORECASE)
_LEAD = re.compile(
    r"^\W*(?:(?:please|pls|also|and|ok|okay)[\s,]+)?(?:remember(?:\s+(?:that|this))?|note(?:\s+(?:for\s+later|to\s+self))?"
    r"|make\s+a\s+note(?:\s+that)?|keep\s+in\s+mind(?:\s+for\s+future\s+sessions)?(?:\s+that)?|for\s+the\s+record|fyi)"
    r"[\s:,-]*",
    re.IGNORECASE,
)


def remembered(*, session_id: str, prompt: str, at: str, repository: Repository, user: str) -> dict[str, Any] | None:
    """What a prompt that tells the agent to remember something ("Remember: we decided to pin
    click<8.2 because ...") stores at once: the person's own words, without the request's lead, as
    a ``decision`` when it says one was made (else a ``note``), about the repository, by the person
    (None when nothing is left to keep). The turn itself is captured at ``Stop`` as any other."""
    said = turn_text(_LEAD.sub("", prompt, count=1))
    if not said:
        return None
    said = said[0].upper() + said[1:]
    metadata: dict[str, Any] = {"repo": repository.name, "agent": SOURCE_TYPE, "actorKind": "human"}
    if repository.branch:
        metadata["branch"] = repository.branch
    first_line = said.splitlines()[0]
    return {
        "id": turn_id(session_id, said, "remembered"),
        "source": SOURCE,
        "sourceType": SOURCE_TYPE,
        "observationType": "decision" if _DECIDED.search(said) else "note",
        "actorName": user,
        "occurredAt": at,
        "title": first_line if len(first_line) <= 80 else first_line[:79].rstrip() + "…",
        "content": said,
        "metadata": metadata,
    }
