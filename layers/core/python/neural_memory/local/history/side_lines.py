"""The commits a main line's merges brought in: each merge's side line (a pull request's branch, a
maintenance branch merged in), walked through the history's graph."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from neural_memory.local.history.git_log import Commit

__all__ = ["ancestors", "brought_by", "side_lines"]


def ancestors(starts: Iterable[str], graph: Mapping[str, Commit]) -> set[str]:
    """The commits of ``graph`` that ``starts`` reach (themselves included), through ``graph``."""
    found: set[str] = set()
    queue = [sha for sha in starts if sha in graph]
    while queue:
        sha = queue.pop()
        if sha not in found:
            found.add(sha)
            queue.extend(p for p in graph[sha].parents if p in graph and p not in found)
    return found


def side_lines(commits: list[Commit], graph: dict[str, Commit]) -> dict[str, list[Commit]]:
    """For each merge of the main line, the commits it brought in (not on the main line, not
    brought in by an earlier merge, nor before the range read: ``--since``), newest first."""
    seen = {c.sha for c in commits}
    if commits and commits[0].parents:
        seen |= ancestors(commits[0].parents[:1], graph)
    brought: dict[str, list[Commit]] = {}
    for merge in (c for c in commits if len(c.parents) > 1):
        found: list[Commit] = []
        queue = deque(merge.parents[1:])  # breadth first: newest first
        while queue:
            sha = queue.popleft()
            if sha in seen or sha not in graph:
                continue
            seen.add(sha)
            found.append(graph[sha])
            queue.extend(graph[sha].parents)
        brought[merge.sha] = found
    return brought


def brought_by(merge: Commit, side: list[Commit], by_sha: Mapping[str, Commit]) -> list[Commit]:
    """The commits a side line's PR merge brought in, newest first: those among ``side``
    (``by_sha``: the same, by sha) its second parents reach and its first parent does not
    (not the maintenance branch's own)."""
    if len(merge.parents) < 2:
        return []
    mine = ancestors(merge.parents[1:], by_sha) - ancestors(merge.parents[:1], by_sha)
    return [c for c in side if c.sha in mine]
