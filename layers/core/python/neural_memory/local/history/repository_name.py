"""Which GitHub repository a clone is (owner/name): a remote's, else the one the project's own files
link to, else none; ``history.git`` says which it took and how to say otherwise."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from neural_memory.local.history.git_log import GitHistoryError, GitLog

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["LOCAL_OWNER", "REMOTE_HOPS", "clone_folder", "github_remote", "linked_repo"]

_GITHUB_REMOTE = re.compile(r"github\.com[:/]+([^/\s]+/[^/\s]+?)(?:\.git)?/?$")
REMOTE_HOPS = 3  # local clones of clones followed to find a GitHub remote
# Files of the newest tree whose GitHub links may name the repository, most telling first.
PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "package.json", "Cargo.toml", "README.md", "README.rst")
_GITHUB_LINK = re.compile(r"github\.com[:/]([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9_.-]+)")
_NOT_OWNERS = frozenset({"sponsors", "orgs", "apps", "features", "marketplace", "topics", "settings", "users", "login"})
LOCAL_OWNER = "local"  # the owner of a repository no remote or project file names


def clone_folder(log: GitLog, path: Path) -> str:
    """The clone's folder name, as a repository name may spell it (``werkzeug`` of ``werkzeug.git``)."""
    try:
        top = log.run("rev-parse", "--show-toplevel").strip()
    except GitHistoryError:  # a bare repository
        top = ""
    name = Path(top or path.resolve()).name
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name.removesuffix(".git")) or "repository"


def linked_repo(show: Callable[[str], str | None], folder: str) -> tuple[str, str] | None:
    """The GitHub repository the project's files (``PROJECT_FILES``, read by ``show``) link to, and
    which file: the one named most, when it is the clone ``folder``'s name or at least two thirds of
    the links name it; None when no name stands out."""
    counts: Counter[str] = Counter()
    spelled: dict[str, tuple[str, str]] = {}
    for name in PROJECT_FILES:
        body = show(name)
        for owner, linked in _GITHUB_LINK.findall(body or ""):
            repo = linked.rstrip(".").removesuffix(".git")
            if owner.lower() in _NOT_OWNERS or not repo:
                continue
            key = f"{owner}/{repo}".lower()
            counts[key] += 1
            spelled.setdefault(key, (f"{owner}/{repo}", name))
    if not counts:
        return None
    mine = Counter({k: n for k, n in counts.items() if k.split("/", 1)[1] == folder.lower()})
    pool = mine or counts
    best, n = pool.most_common(1)[0]
    if 3 * n < 2 * pool.total() or (not mine and n < 2):
        return None
    return spelled[best]


def github_remote(path: Path, hops: int) -> str | None:
    """owner/name of the first remote of the clone at ``path`` (origin first) that is on GitHub;
    a remote that is a local path (a clone of a clone) is asked in turn, ``hops`` deep."""
    log = GitLog(path)
    try:
        remotes = log.run("remote").split()
    except GitHistoryError:
        return None
    for remote in sorted(remotes, key=lambda r: r != "origin"):
        try:
            url = log.run("remote", "get-url", remote).strip()
        except GitHistoryError:
            continue
        match = _GITHUB_REMOTE.search(url)
        if match is not None:
            return match.group(1)
        local = Path(url.removeprefix("file://"))
        if hops > 0 and "://" not in url.removeprefix("file://") and ":" not in url.split("/", 1)[0]:
            base = local if local.is_absolute() else path / local
            if base.is_dir() and (found := github_remote(base, hops - 1)) is not None:
                return found
    return None
