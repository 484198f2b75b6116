"""The compact text an agent's model reads from each tool's reply (the full reply is the tool
result's structured content): one line per result, ids first so the model can quote them to
``get_memory`` or ``forget``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neural_memory.models import (
        AnswerResponse,
        DeleteResponse,
        ObservationOut,
        ObservationsResponse,
        SearchResponse,
    )


def search_summary(query: str, reply: SearchResponse) -> str:
    """Numbered results: id, title, where and when, score, then the snippet."""
    if not reply.results:
        lines = [f"No memories match {query!r}."]
    else:
        lines = [f"{len(reply.results)} memories for {query!r}, best first:"]
        for n, result in enumerate(reply.results, 1):
            who = f", {result.actor_name}" if result.actor_name else ""
            when = result.occurred_at.strftime("%Y-%m-%d %H:%M")
            lines.append(
                f"{n}. [{result.id}] {result.title} ({result.source}/{result.observation_type}{who}, {when}, "
                f"score {result.score:.2f})"
            )
            lines.append(f"   {result.snippet}")
    if reply.degraded:
        lines.append(f"(degraded: {'; '.join(reply.degraded)})")
    return "\n".join(lines)


def answer_summary(reply: AnswerResponse) -> str:
    """The answer, then each citation: id, title and the quoted words."""
    lines = [reply.answer]
    if reply.citations:
        lines.append("Sources:")
        lines.extend(f'- [{c.id}] {c.title}: "{c.quote}"' for c in reply.citations)
    else:
        lines.append("(no source in memory supports an answer)")
    if reply.method == "extractive":
        lines.append("(extractive: the best sentences of the top memories, no LLM answer)")
    return "\n".join(lines)


def remember_summary(reply: ObservationsResponse) -> str:
    """How many were new or updated, and their ids."""
    return f"Remembered {len(reply.ids)} ({reply.created} new, {reply.updated} updated): {', '.join(reply.ids)}"


def memory_summary(reply: ObservationOut) -> str:
    """One observation in full: what, who, when, then its content."""
    who = f" by {reply.actor_name}" if reply.actor_name else ""
    lines = [
        f"[{reply.id}] {reply.title}",
        f"{reply.source}/{reply.observation_type}{who}, {reply.occurred_at.isoformat()}, tier {reply.tier}",
    ]
    if reply.url:
        lines.append(reply.url)
    if reply.superseded_by:
        lines.append(f"superseded by {reply.superseded_by}")
    if reply.content:
        lines.append(reply.content)
    return "\n".join(lines)


def forget_summary(reply: DeleteResponse) -> str:
    """Which observation went."""
    return f"Forgot {reply.id}."
