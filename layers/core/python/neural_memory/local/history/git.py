"""``neural-memory import git``: a local clone's history as the webhooks would have delivered it.

The first-parent history of the default branch is what a team pushed: each first-parent commit
becomes a ``push`` whose ``after`` is that commit (a webhook push of several commits names only its
head, so a later delivery of the same push updates the import of its head). A merged pull request
is recognised from its merge commit ("Merge pull request #12 from owner/branch", or the pull
request's title: "Title (#12)") or its squash commit ("Title (#12)") and becomes the
``pull_request`` ``closed`` + ``merged`` payload, with the merge commit as ``merge_commit_sha``:
the push and the PR then share a commit (lineage).

Offline: it reads ``git log`` once for the main line (paths per commit, relative to its first
parent, renames detected), once more for the messages of the commits merges brought in, and once,
streamed, for the main line's diffs (the definitions each changed: ``history.definitions``); all
three as they stream (``history.git_log``), any shape git allows. The events are then built one
main-line commit at a time, as the sink writes them: the payloads of a long history are never held
at once, and ``Checkpoint`` s between commits let an interrupted import continue.

Beside it: who each author is (``history.identities``), which pull request a commit merged
(``history.merged_pulls``), what a merge brought in (``history.side_lines``), which GitHub
repository the clone is (``history.repository_name``) and the payloads themselves
(``history.git_payloads``).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neural_memory.engineering.experts import is_bot
from neural_memory.local.history.cursor import Checkpoint
from neural_memory.local.history.definitions import DiffDefinitions, attributes
from neural_memory.local.history.events import bus_event
from neural_memory.local.history.git_log import Commit, GitHistoryError, GitLog, text
from neural_memory.local.history.git_payloads import pull_request, push
from neural_memory.local.history.identities import Identities
from neural_memory.local.history.merged_pulls import MergedPullRequest, default_title, merged_pull_request
from neural_memory.local.history.renames import PathNames
from neural_memory.local.history.repository_name import (
    LOCAL_OWNER,
    REMOTE_HOPS,
    clone_folder,
    github_remote,
    linked_repo,
)
from neural_memory.local.history.side_lines import brought_by, side_lines

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["Commit", "GitHistory", "GitHistoryError", "Identities", "MergedPullRequest", "merged_pull_request"]

_RECORD = "\x1e"


GRAPH_MESSAGE_CHARS = 8_000  # of each commit's message the whole history's graph holds
CHANGES_MESSAGE_CHARS = 200  # the same, for the paths every commit changed (eval-history's truth)
DEFAULT_BRANCHES = ("main", "master", "trunk", "develop")


@dataclass(frozen=True)
class _Step:
    """One event to build: the push of main-line commit ``index``, or a pull request merged by
    ``commit`` (on the main line, or on a side line that main-line commit brought in)."""

    origin: str
    index: int
    commit: Commit
    pull: MergedPullRequest | None
    brought: list[Commit]
    base: str | None


class GitHistory:
    """The history of one branch of a clone, as bus events, oldest first."""

    def __init__(self, path: Path, *, repo: str | None = None, branch: str | None = None, since: str | None = None):
        self.path = path
        self._log = GitLog(path)
        self._git("rev-parse", "--git-dir")
        self.warnings: list[str] = []  # what the import could not read, and went on without
        self.notes: list[str] = []  # what it inferred, and how to say otherwise
        self.branch = branch or self._default_branch()
        self._git("rev-parse", "--verify", "--quiet", f"{self.branch}^{{commit}}")
        self._since = since
        self.repo = repo or self._infer_repo()
        self.shallow = self._shallow_boundary()
        self._who = Identities([])  # until ``prepare`` reads the history
        self._defined: dict[str, list[str]] = {}  # the same: the definitions each main-line commit changed
        self._main: list[Commit] | None = None
        self._graph: dict[str, Commit] | None = None
        self._changes: dict[str, Commit] | None = None
        self._names: PathNames | None = None
        self._steps: list[_Step] | None = None
        self.skipped = 0  # events a resumed import did not build again

    def _git(self, *args: str) -> str:
        return self._log.run(*args)

    @property
    def owner(self) -> str:
        """The repository's owner (``pallets`` of ``pallets/werkzeug``)."""
        return self.repo.split("/", 1)[0]

    @property
    def who(self) -> Identities:
        """Who each commit's author is (read by ``prepare``)."""
        return self._who

    def _infer_repo(self) -> str:
        """owner/name on GitHub: a remote's (origin first; a remote that is another local clone is
        asked in turn), else the one the project's own files link to when one name stands out,
        else ``local/<folder>``; the last two say so (``notes``, ``warnings``)."""
        found = github_remote(self.path, REMOTE_HOPS)
        if found is not None:
            return found
        folder = clone_folder(self._log, self.path)
        named = linked_repo(self.show, folder)
        if named is not None:
            repo, where = named
            self.notes.append(
                f"repository {repo}: no remote is on GitHub, and {where} links to it (give --repo owner/name otherwise)"
            )
            return repo
        repo = f"{LOCAL_OWNER}/{folder}"
        self.warnings.append(
            f"no remote or project file names the repository on GitHub: importing it as {repo}; give --repo "
            "owner/name (as GitHub names it) so that webhook deliveries later update these observations"
        )
        return repo

    def _default_branch(self) -> str:
        for ref in ("refs/remotes/origin/HEAD", "HEAD"):
            try:
                name = self._git("symbolic-ref", "--short", ref).strip()
            except GitHistoryError:
                continue
            return name.removeprefix("origin/") if ref != "HEAD" and self._has(name.removeprefix("origin/")) else name
        # A detached HEAD: a usual default branch, else the one branch there is.
        branches = self._git("for-each-ref", "--format=%(refname:short)", "refs/heads").split()
        found = [b for b in DEFAULT_BRANCHES if b in branches] or (branches if len(branches) == 1 else [])
        if not found:
            raise GitHistoryError(f"{self.path}: no default branch (detached HEAD); give --branch")
        self.notes.append(f"HEAD is detached: reading branch {found[0]} (--branch reads another)")
        return found[0]

    def _has(self, branch: str) -> bool:
        try:
            self._git("rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}")
        except GitHistoryError:
            return False
        return True

    def _shallow_boundary(self) -> set[str]:
        """The commits whose parents a shallow clone lacks (empty for a whole clone)."""
        if self._git("rev-parse", "--is-shallow-repository").strip() != "true":
            return set()
        listed = Path(self._git("rev-parse", "--git-path", "shallow").strip())
        try:
            return set((listed if listed.is_absolute() else self.path / listed).read_text().split())
        except OSError:
            return set()

    def show(self, path: str) -> str | None:
        """The text of ``path`` in the branch's newest tree, or None if it has none; a symbolic link
        is followed within the tree (``CHANGELOG.md -> docs/release-notes.md``)."""
        for _ in range(8):  # links to links, not forever
            listed = self._log.run_bytes("ls-tree", "-z", self.branch, "--", path)
            if not listed:
                return None
            mode = listed.split(b" ", 1)[0]
            body = self._log.run_bytes("show", f"{self.branch}:{path}")
            if body is None:
                return None
            if mode != b"120000":
                return text(body)
            target = text(body).strip()
            if target.startswith("/"):
                return None  # a link out of the tree
            path = os.path.normpath(os.path.join(os.path.dirname(path), target))
            if path.startswith(".."):
                return None
        return None

    def files(self) -> list[str]:
        """The paths of the branch's newest tree."""
        return [text(p) for p in self._log.tokens("ls-tree", "-r", "-z", "--name-only", self.branch) if p]

    def changes(self) -> dict[str, Commit]:
        """Every commit the branch reaches, by sha, with the paths it changed (a merge against its
        first parent: the paths a PR merged there brought; git lists none for a merge unless
        asked) and its renames; read once."""
        if self._changes is None:
            args = ["--diff-merges=first-parent", "--name-status", self.branch]
            self._changes = {c.sha: c for c in self._read("changes", args, CHANGES_MESSAGE_CHARS)}
        return self._changes

    def touches(self) -> dict[str, list[str]]:
        """Every commit the branch reaches (merges by their first parent), by sha: the paths it changed."""
        return {sha: commit.paths for sha, commit in self.changes().items()}

    def _read(self, what: str, args: list[str], max_message: int | None = None) -> list[Commit]:
        """Commits with their paths, renames detected; without, and a warning, if git cannot
        (a partial clone offline lacks the blobs detection compares)."""
        try:
            return list(self._log.commits("-M", *args, paths=True, max_message=max_message))
        except GitHistoryError as exc:
            self.warnings.append(f"renames not followed in the {what} ({exc})")
            return list(self._log.commits("--no-renames", *args, paths=True, max_message=max_message))

    def definitions(self) -> dict[str, list[str]]:
        """The main line's commits, by sha: the functions and classes each changed against its
        first parent (``history.definitions``), from one ``git log -p`` read as it streams. What
        only enriches the import never stops it: if git cannot read the diffs (a partial clone
        offline, a missing object), a warning says why and no commit has definitions."""
        reader = DiffDefinitions()
        with tempfile.TemporaryDirectory(prefix="nm-git-") as folder:
            rules = Path(folder) / "attributes"
            rules.write_text(attributes())
            command = ["git", "-c", "core.quotepath=off", "-c", f"core.attributesFile={rules}", "-C", str(self.path)]
            command += ["log", "--first-parent", "--diff-merges=first-parent", "-p", "-U0", "-M", "--no-color"]
            command += ["--no-ext-diff", "--no-textconv", f"--format={_RECORD}%H", *self._range(), self.branch]
            errors = Path(folder) / "stderr"
            # Bytes, split at newlines only: a carriage return inside a diff is not a line break.
            # No lazy fetch: a partial clone's missing blobs fail here instead of going online.
            with (
                errors.open("wb") as stderr,
                subprocess.Popen(
                    command, stdout=subprocess.PIPE, stderr=stderr, env={**os.environ, "GIT_NO_LAZY_FETCH": "1"}
                ) as git,
            ):
                assert git.stdout is not None
                for raw in git.stdout:
                    line = raw.decode("utf-8", errors="replace")
                    if line.startswith(_RECORD):
                        reader.start(line[1:].strip())
                    else:
                        reader.feed(line)
            if git.returncode != 0:
                why = errors.read_text(errors="replace").strip().splitlines()[-1:] or ["failed"]
                self.warnings.append(f"no changed code read from the diffs (git log -p: {why[0]})")
                return {}
        found = reader.finish()
        for sha in self.shallow:  # a boundary commit's diff is its whole tree: no change of its own
            found.pop(sha, None)
        return found

    def _range(self) -> list[str]:
        return [f"--since={self._since}"] if self._since else []

    def count(self) -> int:
        """How many commits of the main line the import reads."""
        return int(self._git("rev-list", "--first-parent", "--count", *self._range(), self.branch).strip() or 0)

    def commits(self) -> list[Commit]:
        """The main line, oldest first, each with the paths it changed against its first parent
        (renames detected). A shallow clone's boundary commits list none: git would list their
        whole tree as added."""
        if self._main is None:
            args = ["--first-parent", "--reverse", "--diff-merges=first-parent", "--name-status"]
            main = self._read("main line", [*args, *self._range(), self.branch])
            cut = [c for c in main if c.sha in self.shallow]
            for commit in cut:
                commit.added, commit.modified, commit.removed, commit.renamed = [], [], [], []
            if self.shallow:
                since = main[0].committed[:10] if main else "?"
                self.warnings.append(
                    f"a shallow clone: the history before {since} is not in it ({len(main)} main-line commits "
                    f"read; the oldest's changes unknown); `git fetch --unshallow` in the clone brings the rest"
                )
            self._main = main
        return self._main

    def graph(self) -> dict[str, Commit]:
        """Every commit the branch reaches (no paths), by sha: one ``git log``, read once."""
        if self._graph is None:
            self._graph = {c.sha: c for c in self._log.commits(self.branch, max_message=GRAPH_MESSAGE_CHARS)}
        return self._graph

    def names(self) -> PathNames:
        """The main line's renames: each path under its newest name."""
        if self._names is None:
            self._names = PathNames(self.commits())
        return self._names

    def prepare(self) -> int:
        """Read the history (the main line, every commit's author and message, the diffs) and plan
        its events; how many there are."""
        if self._steps is None:
            commits = self.commits()
            graph = self.graph()
            self._who = Identities(graph.values(), owner=self.owner)
            self._defined = self.definitions()
            self.names()
            self._steps = self._plan(commits, graph)
        return len(self._steps)

    def _plan(self, commits: list[Commit], graph: dict[str, Commit]) -> list[_Step]:
        """Every push and merged pull request, in the order they happened: the main line's, and
        the pull requests merged on a side line (a maintenance branch merged in) just before the
        push that brought them."""
        brought = side_lines(commits, graph)
        numbers: set[int] = set()
        steps: list[_Step] = []
        for index, commit in enumerate(commits):
            origin = f"{self.repo}@{commit.sha[:12]}"
            side = brought.get(commit.sha, [])
            by_sha = {c.sha: c for c in side}
            for merged in reversed(side):
                if (found := merged_pull_request(merged)) is None or found.number in numbers:
                    continue
                within = brought_by(merged, side, by_sha)
                pull = self._merged_by_whom(merged, within, graph)
                if pull is not None and pull.number not in numbers:
                    numbers.add(pull.number)
                    steps.append(_Step(f"{origin} (#{pull.number})", index, merged, pull, within, None))
            steps.append(_Step(origin, index, commit, None, side, None))
            pull = self._merged_by_whom(commit, side, graph)
            if pull is not None and pull.number not in numbers:
                numbers.add(pull.number)
                steps.append(_Step(f"{origin} (#{pull.number})", index, commit, pull, side, self.branch))
        return steps

    def events(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(origin, bus event) for every push and merged pull request, oldest first."""
        for item in self.stream():
            if not isinstance(item, Checkpoint):
                yield item

    def stream(self, after: str | None = None) -> Iterator[tuple[str, dict[str, Any]] | Checkpoint]:
        """The events, each built as it is asked for, with a ``Checkpoint`` (``{"commit": sha}``)
        once a main-line commit's events are all out; ``after``: a checkpoint's commit, whose
        events and those before it are passed over (``skipped`` counts them). A commit the main
        line no longer holds (a rewritten history) starts from the beginning, and says so."""
        self.prepare()
        assert self._steps is not None
        main = self.commits()
        start = -1
        if after is not None:
            start = next((n for n, c in enumerate(main) if c.sha == after), -1)
            if start < 0:
                self.warnings.append(f"commit {after[:12]} of the last import is not on {self.branch}: importing all")
        self.skipped = sum(1 for step in self._steps if step.index <= start)
        steps = self._steps
        for n, step in enumerate(steps):
            if step.index <= start:
                continue
            yield step.origin, self._event(step)
            if n + 1 == len(steps) or steps[n + 1].index != step.index:
                yield Checkpoint({"commit": main[step.index].sha})

    def _event(self, step: _Step) -> dict[str, Any]:
        names = self.names()
        if step.pull is None:
            payload = push(self.repo, self.branch, self._who, names, step.commit, step.brought, step.index)
            return bus_event("github", "push", payload, step.commit.committed)
        payload = pull_request(
            self.repo, self._who, names, self._defined, step.commit, step.pull, step.brought, step.base, step.index
        )
        return bus_event("github", "pull_request", payload, step.commit.committed)

    def _merged_by_whom(
        self, commit: Commit, brought: list[Commit], graph: dict[str, Commit]
    ) -> MergedPullRequest | None:
        """The pull request ``commit`` merged, its author a person. A merge commit titled by the
        pull request ("Title (#12)") is authored by whoever merged it, and a branch pushed to the
        repository itself ("from pallets/fix-x") names the organisation: there the author of most
        of the commits the merge ``brought`` in stands in, as the one who wrote the branch (a
        bot's fix-ups counted only when a bot wrote all of it), else the branch head's author."""
        pull = merged_pull_request(commit, self._who.of(commit))
        if pull is None:
            return None
        written = [c for c in brought if len(c.parents) < 2] if len(commit.parents) > 1 else []
        if not pull.title:
            pull = replace(pull, title=default_title(pull, written) or commit.subject)
        if len(commit.parents) > 1 and (pull.head is None or pull.author.lower() == self.owner.lower()):
            authors = [self._who.of(c) for c in written]
            people = [a for a in authors if not is_bot(a)] or authors
            head = graph.get(commit.parents[1])
            if people:  # most_common keeps first-seen order among ties: the newest commit's author
                pull = replace(pull, author=Counter(people).most_common(1)[0][0])
            elif head is not None:
                pull = replace(pull, author=self._who.of(head))
        return pull
