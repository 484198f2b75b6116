"""The repository and branch a session works in, read from the ``.git`` files (no ``git``
process: a hook runs on every prompt). A worktree's ``.git`` file points to its git dir, whose
``commondir`` holds the shared config."""

from __future__ import annotations

import re
from pathlib import Path

# git@github.com:owner/name.git, https://github.com/owner/name(.git), ssh://git@host/owner/name
_REMOTE = re.compile(r"(?:[:/])([^/:]+/[^/]+?)(?:\.git)?/?$")


class Repository:
    """``name``: owner/name from the origin remote, else the work tree's folder name; ``branch``:
    the checked-out branch (None when detached or not a repository)."""

    __slots__ = ("branch", "name")

    def __init__(self, name: str, branch: str | None) -> None:
        self.name = name
        self.branch = branch

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Repository) and (self.name, self.branch) == (other.name, other.branch)

    def __hash__(self) -> int:
        return hash((self.name, self.branch))

    def __repr__(self) -> str:
        return f"Repository({self.name!r}, {self.branch!r})"


def read_repository(cwd: Path) -> Repository:
    """The repository holding ``cwd`` (or ``cwd``'s folder name when it is in none)."""
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_dir():
                return _read(folder, dot_git)
            if dot_git.is_file():
                pointer = dot_git.read_text(errors="replace").strip()
                if pointer.startswith("gitdir:"):
                    git_dir = Path(pointer.removeprefix("gitdir:").strip())
                    return _read(folder, git_dir if git_dir.is_absolute() else folder / git_dir)
        except OSError:
            break
    return Repository(cwd.name or str(cwd), None)


def work_tree_root(cwd: Path) -> Path | None:
    """The top folder of the work tree holding ``cwd`` (where its ``.git`` is), None outside one."""
    for folder in (cwd, *cwd.parents):
        try:
            if (folder / ".git").exists():
                return folder
        except OSError:
            return None
    return None


def _read(work_tree: Path, git_dir: Path) -> Repository:
    branch = None
    try:
        head = (git_dir / "HEAD").read_text(errors="replace").strip()
        if head.startswith("ref: refs/heads/"):
            branch = head.removeprefix("ref: refs/heads/")
    except OSError:
        pass
    common = git_dir
    try:
        pointer = (git_dir / "commondir").read_text(errors="replace").strip()
        common = Path(pointer) if Path(pointer).is_absolute() else git_dir / pointer
    except OSError:
        pass
    return Repository(_origin(common / "config") or work_tree.name, branch)


def _origin(config: Path) -> str | None:
    """owner/name of the ``origin`` remote's url in a git config file."""
    try:
        lines = config.read_text(errors="replace").splitlines()
    except OSError:
        return None
    in_origin = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            in_origin = stripped.replace(" ", "") == '[remote"origin"]'
        elif in_origin and stripped.startswith("url"):
            url = stripped.partition("=")[2].strip()
            found = _REMOTE.search(url)
            return found.group(1) if found else None
    return None
