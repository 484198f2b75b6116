"""A repository's own memory, found without flags: the data folder ``.neural-memory`` at the root of
its work tree (kept out of git through ``.git/info/exclude``) and the workspace named after the
repository (``owner/name`` as ``owner.name``: a workspace name holds no ``/``).

``import git`` in a repository, ``agents install claude-code`` in it, the hooks, ``neural-memory mcp``
and the CLI's ``search``, ``ask`` and ``who`` all reach the same one by this rule, unless told
otherwise (``--data-dir``/``NM_DATA_DIR``, ``--workspace``, ``--url``). Its ``repository.json``
says which repository it holds: a folder without it (the demo's ``.neural-memory`` in this project's
own checkout) is not taken for one. The standard library only: the hook reads it on every event."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from neural_memory.local.agents.repository import read_repository, work_tree_root

DATA_FOLDER = ".neural-memory"
MARKER = "repository.json"
EXCLUDE_MARK = "# neural-memory: the repository's memory stays out of git"
_NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def workspace_for(repository: str) -> str:
    """The workspace of ``owner/name``: ``owner.name`` (at most 64 characters, as workspaces are)."""
    name = _NOT_IN_A_NAME.sub("-", repository.replace("/", ".")).strip(".-_") or "repository"
    return name[:64]


class RepositoryMemory:
    """``root``: the work tree; ``repository``: its owner/name; ``data_dir`` and ``workspace``."""

    __slots__ = ("data_dir", "repository", "root", "workspace")

    def __init__(self, root: Path, repository: str, data_dir: Path, workspace: str) -> None:
        self.root = root
        self.repository = repository
        self.data_dir = data_dir
        self.workspace = workspace

    def exists(self) -> bool:
        """Whether the memory was made (an import or an install wrote its marker)."""
        return (self.data_dir / MARKER).is_file()

    def imported(self) -> bool:
        """Whether the repository's history was imported into it (``import git`` completed)."""
        marked = _read_json(self.data_dir / MARKER)
        return isinstance(marked, dict) and bool(marked.get("historyImportedAt"))

    def mark(self, imported_at: str | None = None) -> None:
        """Write the marker (with when the history was imported) and keep the folder out of git."""
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        marker = self.data_dir / MARKER
        kept = _read_json(marker)
        document: dict[str, str] = {"repository": self.repository, "workspace": self.workspace}
        if isinstance(kept, dict) and isinstance(kept.get("historyImportedAt"), str):
            document["historyImportedAt"] = kept["historyImportedAt"]
        if imported_at:
            document["historyImportedAt"] = imported_at
        if kept != document:
            marker.write_text(json.dumps(document) + "\n", encoding="utf-8")
        if self.data_dir == self.root / DATA_FOLDER:
            exclude_from_git(self.root, "/" + DATA_FOLDER + "/", EXCLUDE_MARK)


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def repository_memory(cwd: Path, data_dir: str | None = None) -> RepositoryMemory | None:
    """The memory of the repository holding ``cwd`` (None outside a git work tree); ``data_dir``
    (else ``NM_DATA_DIR``) overrides the folder, never the workspace."""
    root = work_tree_root(cwd)
    if root is None:
        return None
    repository = read_repository(root).name
    chosen = data_dir or os.environ.get("NM_DATA_DIR") or ""
    folder = Path(chosen).expanduser() if chosen else root / DATA_FOLDER
    if not folder.is_absolute():
        folder = Path.cwd() / folder
    marked = _read_json(folder / MARKER)
    kept = marked if isinstance(marked, dict) else {}
    workspace = kept.get("workspace")
    if not isinstance(workspace, str) or kept.get("repository") != repository:  # another repository's folder
        workspace = workspace_for(repository)
    return RepositoryMemory(root, repository, folder, workspace)


def exclude_from_git(root: Path, entry: str, mark: str, remove: bool = False) -> bool:
    """Add (or remove) ``entry`` in the repository's ``.git/info/exclude`` under ``mark`` (an entry
    the user wrote stays); whether the file changed. A worktree's ``.git`` file: nothing done."""
    info = root / ".git" / "info"
    if not (root / ".git").is_dir():
        return False
    exclude = info / "exclude"
    lines = exclude.read_text().splitlines() if exclude.exists() else []
    ours = [n for n in range(len(lines) - 1) if lines[n] == mark and lines[n + 1] == entry]
    if remove:
        if not ours:
            return False
        lines = lines[: ours[0]] + lines[ours[0] + 2 :]
    elif ours or entry in lines:
        return False
    else:
        lines = [*lines, mark, entry]
    info.mkdir(parents=True, exist_ok=True)
    exclude.write_text("\n".join(lines) + ("\n" if lines else ""))
    return True
