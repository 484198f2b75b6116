"""A memory as the hooks' text shows it to the model: a line with its id, date, source and type,
who, and what it says (its title and the prose of its snippet, without the lists a change carries
and without what ``trust.relay`` withholds), marked when a later push made it possibly stale; who
knows a path, with their evidence; and how a memory came to be (its lineage, oldest first)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from neural_memory.local.agents.memory_client import MemoryUnavailable

if TYPE_CHECKING:
    from collections.abc import Collection

ITEM_CHARS = 260  # one memory's text at most: its title and the sentence that says what it did
# What a change's text lists rather than says: the code and files it touched, its commits' subjects
_LISTS = re.compile(r"\s*\b(?:Changed code|Files|Co-authored-by|Signed-off-by):.*$", re.DOTALL)
_COMMITS = re.compile(r"\s*\bCommits:\s*")  # a PR's commits' messages: its only prose when it has no body
_BULLETS = re.compile(r"(?:^|\s)[*-] ")
_SHA = re.compile(r"\s*\([0-9a-f]{7,12}\)")  # a pushed commit's short sha, after its subject


def day_of(value: Any) -> str:
    return str(value)[:10] if value else "undated"


def shortened(text: str, limit: int = ITEM_CHARS) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _stale_note(result: dict[str, Any]) -> str:
    commit = result.get("possiblyStale")
    return f" [possibly stale: a later push, {str(commit)[:7]}, touched the code it is about]" if commit else ""


def relayed(text: str, memory_id: str) -> str:
    """``trust.relay.relayed``, imported when a prompt's recall hands something over (most hand
    over nothing, and a hook is a process per event)."""
    from neural_memory.trust.relay import relayed as relay

    return relay(text, memory_id)


def _said(result: dict[str, Any]) -> str:
    """What a memory says, for the model: its title and the words of its snippet, without the lists
    a change carries (files, code, commit subjects: the model reads those with get_memory), and
    without what it must not relay (``trust.relay``: instruction-like text, invisible characters)."""
    memory = str(result.get("id"))
    title = relayed(str(result.get("title") or ""), memory)
    text = _LISTS.sub("", relayed(str(result.get("snippet") or ""), memory))
    prose, *commits = _COMMITS.split(text, maxsplit=1)
    text = prose if prose.strip(" .:-…") or not commits else commits[0]
    if result.get("observationType") == "push":  # what a push says is its commits' subjects
        subjects = [_SHA.sub("", b).strip() for b in _BULLETS.split(text)[1:]]
        text = "; ".join(x for x in subjects if x and x not in title)
    elif result.get("observationType") != "conversation_turn":
        bullets = _BULLETS.split(text)
        text = bullets[0].strip() or " ".join(b.strip() for b in bullets[1:3])  # prose first; else two bullets
    text = text.strip(" .:-…") or ""
    if result.get("observationType") == "conversation_turn" or (text and title in text):
        return text or title
    return f"{title}: {text}" if text and text not in title else title


def memory_line(result: dict[str, Any]) -> str:
    """``- [id] date source/type, who: title: what it says`` (a chat turn: who said it, then what)."""
    who = f", {result['actorName']}" if result.get("actorName") else ""
    kind = f"{result.get('source')}/{result.get('observationType')}"
    said = shortened(_said(result))
    return f"- [{result.get('id')}] {day_of(result.get('occurredAt'))} {kind}{who}: {said}{_stale_note(result)}"


def experts_lines(path: str, reply: dict[str, Any] | MemoryUnavailable) -> list[str]:
    if isinstance(reply, MemoryUnavailable) or not reply.get("experts"):
        return []
    people = []
    for expert in reply["experts"][:3]:
        counts = expert.get("counts") or {}
        did = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items(), key=lambda c: (-c[1], c[0])))
        evidence = " ".join(f"[{e.get('id')}]" for e in (expert.get("evidence") or [])[:2])
        people.append(f"{expert.get('actorName')} ({did}; e.g. {evidence})")
    return [f"- {path}: " + "; ".join(people)]


def lineage_lines(reply: dict[str, Any] | MemoryUnavailable, shown: Collection[str] = ()) -> list[str]:
    """How a memory came to be, when its timeline holds something not ``shown`` already."""
    if isinstance(reply, MemoryUnavailable) or len(reply.get("timeline") or []) < 2:
        return []
    if all(entry.get("subject") or str(entry.get("id")) in shown for entry in reply["timeline"]):
        return []
    lines = [f"- how [{reply.get('id')}] came to be, oldest first:"]
    for entry in reply["timeline"][-5:]:
        how = (
            "this one"
            if entry.get("subject")
            else ", ".join(f"{link.get('kind')} {link.get('key')}" for link in entry.get("links") or [])
        )
        lines.append(
            f"  {day_of(entry.get('occurredAt'))} [{entry.get('id')}] "
            f"{shortened(relayed(str(entry.get('title') or ''), str(entry.get('id'))), 120)} "
            f"({entry.get('source')}/{entry.get('observationType')}) <- {how}"
        )
    return ["\n".join(lines)]
