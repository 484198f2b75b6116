"""A path's later names: the renames git detects on the main line (``git mv``, a move into
``src/``, a split whose larger part keeps most of the file), so a file's history follows it
through its moves: who wrote it before the move, and the pushes that touched it under its old name.

A rename is a main-line commit's (its diff against its first parent); a commit anywhere in the
history (a pull request's branch) is placed on the main line by its time: the renames of main-line
commits after it apply to it.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from neural_memory.local.history.git_log import Commit

MAX_HOPS = 100  # renames followed from one path: a chain longer than any real history stops here


class PathNames:
    """The main line's renames, to name a path as the newest tree names it."""

    def __init__(self, main_line: Iterable[Commit]) -> None:
        """``main_line``: the main line's commits oldest first, with their renames read."""
        self._renames: dict[str, list[tuple[int, str]]] = {}  # old path -> (commit index, new path)
        self._times: list[datetime] = []  # the latest commit time up to each index (monotonic)
        for index, commit in enumerate(main_line):
            when = datetime.fromisoformat(commit.committed)
            self._times.append(max(when, self._times[-1]) if self._times else when)
            for old, new, _ in commit.renamed:
                self._renames.setdefault(old, []).append((index, new))

    def __bool__(self) -> bool:
        return bool(self._renames)

    def index_at(self, when: datetime) -> int:
        """The index of the last main-line commit at or before ``when`` (-1: before them all)."""
        return bisect_right(self._times, when) - 1

    def newest(self, path: str, index: int) -> str:
        """``path`` as changed at main-line commit ``index``, under the name it had last: through
        each rename after ``index``."""
        for _ in range(MAX_HOPS):
            later = self._renames.get(path)
            if not later:
                return path
            at = bisect_right(later, index, key=lambda pair: pair[0])
            if at == len(later):
                return path
            index, path = later[at]
        return path

    def chain(self, path: str, index: int) -> list[str]:
        """``path`` as at main-line commit ``index``, and each name it took after, in order."""
        names = [path]
        for _ in range(MAX_HOPS):
            later = self._renames.get(path)
            at = bisect_right(later, index, key=lambda pair: pair[0]) if later else 0
            if not later or at == len(later):
                break
            index, path = later[at]
            names.append(path)
        return names

    def newest_at(self, path: str, when: datetime) -> str:
        """``path`` as a commit made at ``when`` changed it, under its last name."""
        return self.newest(path, self.index_at(when))
