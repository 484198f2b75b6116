"""The paths a GitHub push or imported pull request touched, as its observation lists them: once
each, within a code ref's limits, with the name a renamed file took later (``import.laterNames``)."""

from __future__ import annotations

from typing import Any

from neural_memory.ingest.normalizers.base import dig
from neural_memory.models import MAX_CODE_PATHS

MAX_PATH_CHARS = 500  # a code ref path's limit (``CodeRef.paths``)


def later_names(payload: dict[str, Any]) -> dict[str, str]:
    """What an import knows beyond a webhook: the name a path took later, when a rename gave the
    file another (``import.laterNames``), so the event is found by the file's name today."""
    later = dig(payload, "import", "laterNames")
    if not isinstance(later, dict):
        return {}
    return {
        old: new
        for old, new in later.items()
        if isinstance(old, str) and isinstance(new, str) and 0 < len(new) <= MAX_PATH_CHARS
    }


def listed_paths(paths: list[str], later: dict[str, str]) -> str:
    """Paths as content lists them: ``cookies.py (now jar.py)`` for one renamed since."""
    return ", ".join(f"{p} (now {later[p]})" if p in later else p for p in paths)


def touched_paths(commits: list[dict[str, Any]]) -> list[str]:
    """The paths the commits added, modified or removed, once each, in order, at most
    ``MAX_CODE_PATHS`` (GitHub lists up to 3,000 per commit; the rest of a huge push is not tracked)."""
    paths: dict[str, None] = {}
    for commit in commits:
        for kind in ("added", "modified", "removed"):
            listed = commit.get(kind)
            if isinstance(listed, list):
                paths.update((p, None) for p in listed if isinstance(p, str) and 0 < len(p) <= MAX_PATH_CHARS)
    return list(paths)[:MAX_CODE_PATHS]


MAX_REMOVED_PATHS = 100  # of a push's deleted paths kept in its metadata


def removed_paths(commits: list[dict[str, Any]]) -> list[str]:
    """The paths the push's commits deleted and none of its later commits added back."""
    gone: dict[str, None] = {}
    for commit in commits:
        added = commit.get("added")
        for path in added if isinstance(added, list) else []:
            gone.pop(path, None)
        listed = commit.get("removed")
        if isinstance(listed, list):
            gone.update((p, None) for p in listed if isinstance(p, str) and 0 < len(p) <= MAX_PATH_CHARS)
    return list(gone)[:MAX_REMOVED_PATHS]
