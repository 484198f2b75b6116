"""The pull requests a main line records merging: GitHub's merge message ("Merge pull request #12
from owner/branch") or its squash and titled-merge message ("Title (#12)")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neural_memory.local.history.git_log import Commit

__all__ = ["MERGE_PR", "MergedPullRequest", "default_title", "merged_pull_request"]

MERGE_PR = re.compile(r"^Merge pull request #(\d+) from ([^/\s]+)/(\S+)")
_SQUASH_PR = re.compile(r"\(#(\d+)\)\s*$")


@dataclass(frozen=True)
class MergedPullRequest:
    """A pull request as the main line records its merge."""

    number: int
    title: str
    body: str
    author: str
    head: str | None


def merged_pull_request(commit: Commit, author: str | None = None) -> MergedPullRequest | None:
    """The pull request ``commit`` merged, from GitHub's merge or squash message, or None."""
    lines = commit.message.strip().split("\n")
    if match := MERGE_PR.match(lines[0]):  # the title is the body's first line; "" when none
        rest = "\n".join(lines[1:]).strip()
        title, _, body = rest.partition("\n")
        number, author, head = int(match.group(1)), match.group(2), match.group(3)
        return MergedPullRequest(number, title.strip(), body.strip(), author, head)
    # A squash commit, or a merge commit GitHub titled by the pull request ("Title (#12)").
    if match := _SQUASH_PR.search(lines[0]):
        title = lines[0][: match.start()].strip()
        body = "\n".join(lines[1:]).strip()
        return MergedPullRequest(int(match.group(1)), title or lines[0], body, author or commit.author, None)
    return None


def default_title(pull: MergedPullRequest, written: list[Commit]) -> str:
    """The title GitHub gives a pull request its author did not title: the subject of its one
    commit, else its branch's name in words ("fix-cookie_path" -> "Fix cookie path"); "" if
    neither is known."""
    if len(written) == 1:
        return written[0].subject
    words = re.sub(r"[-_]+", " ", pull.head or "").strip()
    return words[:1].upper() + words[1:]
