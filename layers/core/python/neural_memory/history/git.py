"""``neural-memory import git``: a local clone's history as the webhooks would have delivered it.

The first-parent history of the default branch is what a team pushed: each first-parent commit
becomes a ``push`` whose ``after`` is that commit (a webhook push of several commits names only its
head, so a later delivery of the same push updates the import of its head). A merged pull request
is recognised from its merge commit ("Merge pull request #12 from owner/branch", or the pull
request's title: "Title (#12)") or its squash commit ("Title (#12)") and becomes the
``pull_request`` ``closed`` + ``merged`` payload, with the merge commit as ``merge_commit_sha``:
the push and the PR then share a commit (lineage).

Offline: it reads ``git log`` once for the main line (paths per commit, relative to its first
parent), once more for the messages of the commits merges brought in, and once, streamed, for the
main line's diffs (the definitions each changed: ``history.definitions``).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import unicodedata
from collections import Counter, deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neural_memory.engineering.experts import is_bot
from neural_memory.history.definitions import DiffDefinitions, attributes
from neural_memory.history.events import bus_event

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

_RECORD, _FIELD = "\x1e", "\x1f"
_FORMAT = _FIELD.join(["%H", "%P", "%an", "%ae", "%aI", "%cI", "%B"])
_MERGE_PR = re.compile(r"^Merge pull request #(\d+) from ([^/\s]+)/(\S+)")
_SQUASH_PR = re.compile(r"\(#(\d+)\)\s*$")
_GITHUB_REMOTE = re.compile(r"github\.com[:/]+([^/\s]+/[^/\s]+?)(?:\.git)?/?$")
_NOREPLY = re.compile(r"^(?:\d+\+)?([^@]+)@users\.noreply\.github\.com$")
FORK_VOTES = 2  # PRs from one fork whose branch an address wrote most of, to take its login
BRANCH_WALK = 50  # of a PR's branch's commits read to say who wrote it
ADDRESS_NAMES = 3  # names one address may carry and still be one person ("sloria", "Steven Loria")
_PLACEHOLDERS = frozenset({"", "none@none", "you@example.com", "root@localhost", "nobody@nowhere"})
MAX_MERGED_COMMITS = 50  # a merge's push lists at most this many of the commits it brought in
MAX_MESSAGE_CHARS = 2_000  # of each commit's message in a PR's payload (the normalizer keeps 500 of a body)


class GitHistoryError(Exception):
    """The clone cannot be read (not a repository, no such branch, no repository name)."""


@dataclass
class Commit:
    """One commit of the main line, with the paths it changed against its first parent."""

    sha: str
    parents: list[str]
    author: str
    email: str
    authored: str
    committed: str
    message: str
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def subject(self) -> str:
        return self.message.strip().split("\n", 1)[0]


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
    if match := _MERGE_PR.match(lines[0]):  # the title is the body's first line; "" when none
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


def _default_title(pull: MergedPullRequest, written: list[Commit]) -> str:
    """The title GitHub gives a pull request its author did not title: the subject of its one
    commit, else its branch's name in words ("fix-cookie_path" -> "Fix cookie path"); "" if
    neither is known."""
    if len(written) == 1:
        return written[0].subject
    words = re.sub(r"[-_]+", " ", pull.head or "").strip()
    return words[:1].upper() + words[1:]


def _ancestors(starts: Iterable[str], graph: Mapping[str, Commit]) -> set[str]:
    """The commits of ``graph`` that ``starts`` reach (themselves included), through ``graph``."""
    found: set[str] = set()
    queue = [sha for sha in starts if sha in graph]
    while queue:
        sha = queue.pop()
        if sha not in found:
            found.add(sha)
            queue.extend(p for p in graph[sha].parents if p in graph and p not in found)
    return found


class Identities:
    """Who a commit's author is on GitHub, so that one person stays one actor across their pushes
    and pull requests. In order: the login a noreply address names; the login an address or a name
    is known by elsewhere in the history (a noreply commit by the same name; an address whose local
    part is a login that merged pull requests came from, unless someone of another name wrote that
    fork's branches; an address that wrote the branches one person's fork sent: ``_fork_owners``); one
    name for an address written under a few (its most frequent: "sloria" and "Steven Loria" are
    one person); else the name. An address many names share, or a placeholder (``none@none``), is
    nobody's: its commits keep their own names."""

    def __init__(self, commits: Iterable[Commit], *, owner: str | None = None) -> None:
        """``owner``: the repository's owner, whose own branches ("from pallets/fix-x") name no person."""
        listed = list(commits)
        heads = {m.group(2).lower(): m.group(2) for c in listed if (m := _MERGE_PR.match(c.subject))}
        branches = _fork_branches(listed)
        wrote: dict[str, set[str]] = {}  # each fork's branches' writers, by name
        for fork, _, writer in branches:
            wrote.setdefault(fork.lower(), set()).add(writer)
        self._by_name: dict[str, str] = {}
        self._by_email: dict[str, str] = {}
        names: dict[str, Counter[str]] = {}  # the names each address wrote under
        for commit in listed:
            email, name = commit.email.lower(), unicodedata.normalize("NFC", commit.author)
            names.setdefault(email, Counter())[name] += 1
            match = _NOREPLY.match(commit.email)
            login = match.group(1) if match else heads.get(email.partition("@")[0])
            if not match and login and name not in wrote.get(login.lower(), {name}):
                login = None  # Alex Morega at alex@… is not the "alex" whose fork Alex Gaynor wrote
            if login:
                self._by_name.setdefault(name, login)
                self._by_email.setdefault(email, login)
        personal = {e: n.most_common(1)[0][0] for e, n in names.items() if not _shared_address(e, n)}
        for email, login in _fork_owners(branches, owner, set(personal)).items():
            if email not in self._by_email and personal[email] not in self._by_name:
                self._by_email[email] = login
                self._by_name.setdefault(personal[email], login)
        for email, name in personal.items():
            if email not in self._by_email and len(names[email]) > 1:
                self._by_email[email] = self._by_name.get(name, name)

    def of(self, commit: Commit) -> str:
        """The author's login, or their name when the history never says it (in one Unicode form:
        git keeps "ä" as one character or two, as the author's machine wrote it)."""
        match = _NOREPLY.match(commit.email)
        if match:
            return match.group(1)
        name = unicodedata.normalize("NFC", commit.author)
        return self._by_email.get(commit.email.lower()) or self._by_name.get(name) or name


def _shared_address(email: str, names: Counter[str]) -> bool:
    """An address that is not one person's: a placeholder, or written under more than
    ``ADDRESS_NAMES`` names (pytest's ``none@none`` carries 23 people)."""
    domain = email.rpartition("@")[2]
    return email in _PLACEHOLDERS or "." not in domain or len(names) > ADDRESS_NAMES


def _fork_branches(commits: list[Commit]) -> list[tuple[str, str, str]]:
    """(fork, address, name) for each pull request merged "from fork/branch": the fork's login as
    the merge spells it, and who wrote most of its branch (``_branch_author``)."""
    by_sha = {c.sha: c for c in commits}
    trunk = {c.parents[0] for c in commits if len(c.parents) > 1} | _first_parent_line(commits, by_sha)
    found = []
    for commit in commits:
        match = _MERGE_PR.match(commit.subject)
        if match is None or len(commit.parents) < 2:
            continue
        author = _branch_author(commit.parents[1], by_sha, trunk)
        if author is not None:
            found.append((match.group(2), *author))
    return found


def _fork_owners(branches: list[tuple[str, str, str]], owner: str | None, personal: set[str]) -> dict[str, str]:
    """The login each of the ``personal`` addresses is known by from the forks pull requests came
    from (``branches``, ``_fork_branches``): a PR "from bochen/fix" whose branch Bo Chen wrote most
    of is a vote for his address being ``bochen``. An address takes a login with ``FORK_VOTES``
    votes and two thirds of its own (a maintainer's fix-ups on others' branches, where they
    outnumber the branch's own commits, vote for many), and only if it wrote more of that fork's
    branches than any other address; a fork no one person wrote two thirds of, or the owner's, is
    no one's (a personal fork that carried a colleague's branch or two is still its owner's)."""
    votes: dict[str, Counter[str]] = {}  # each address's forks (lower-cased), by branches it wrote there
    wrote: dict[str, Counter[str]] = {}  # each fork's addresses, the same
    people: dict[str, Counter[str]] = {}  # each fork's branches, by the name that wrote them
    spelled: dict[str, str] = {}  # a fork's login as the first merge read spells it
    for login, email, name in branches:
        fork = login.lower()
        spelled.setdefault(fork, login)
        votes.setdefault(email, Counter())[fork] += 1
        wrote.setdefault(fork, Counter())[email] += 1
        people.setdefault(fork, Counter())[name] += 1
    shared = {fork for fork, names in people.items() if 3 * max(names.values()) < 2 * names.total()}
    shared.add((owner or "").lower())
    owners = {}
    for email, counted in votes.items():
        fork, n = counted.most_common(1)[0]
        if email not in personal or fork in shared or n < FORK_VOTES or 3 * n < 2 * sum(counted.values()):
            continue
        if all(n > c for other, c in wrote[fork].items() if other != email):
            owners[email] = spelled[fork]
    return owners


def _first_parent_line(commits: list[Commit], by_sha: Mapping[str, Commit]) -> set[str]:
    """The first-parent line from the history's tips (commits no other commit has as a parent)."""
    children = {p for c in commits for p in c.parents}
    line: set[str] = set()
    for tip in (c for c in commits if c.sha not in children):
        sha: str | None = tip.sha
        while sha is not None and sha in by_sha and sha not in line:
            line.add(sha)
            sha = by_sha[sha].parents[0] if by_sha[sha].parents else None
    return line


def _branch_author(head: str, by_sha: Mapping[str, Commit], trunk: set[str]) -> tuple[str, str] | None:
    """(address, name) of who wrote most of the branch ending at ``head``: its own commits, down its
    first parents to the line it forked from (at most ``BRANCH_WALK``; merges and bots skipped);
    a tie goes to the branch's first commit, as a maintainer's fix-up comes last. None: no person."""
    written: list[tuple[str, str]] = []
    sha: str | None = head
    while sha is not None and sha in by_sha and sha not in trunk and len(written) < BRANCH_WALK:
        commit = by_sha[sha]
        if len(commit.parents) < 2 and not is_bot(commit.author):
            written.append((commit.email.lower(), unicodedata.normalize("NFC", commit.author)))
        sha = commit.parents[0] if commit.parents else None
    counts = Counter(email for email, _ in reversed(written))  # oldest first: ties go to the first
    if not counts:
        return None
    email = counts.most_common(1)[0][0]
    return email, next(name for e, name in written if e == email)


class GitHistory:
    """The history of one branch of a clone, as bus events, oldest first."""

    def __init__(self, path: Path, *, repo: str | None = None, branch: str | None = None, since: str | None = None):
        self.path = path
        self._git("rev-parse", "--git-dir")
        self.repo = repo or self._remote_repo()
        self.branch = branch or self._default_branch()
        self._git("rev-parse", "--verify", "--quiet", f"{self.branch}^{{commit}}")
        self._since = since
        self._who = Identities([])  # until ``events`` reads the history
        self._defined: dict[str, list[str]] = {}  # the same: the definitions each main-line commit changed
        self.warnings: list[str] = []  # what the import could not read, and went on without

    def _git(self, *args: str) -> str:
        try:
            done = subprocess.run(
                ["git", "-c", "core.quotepath=off", "-C", str(self.path), *args],
                capture_output=True,
                check=False,
                text=True,
                encoding="utf-8",
                errors="replace",
            )
        except FileNotFoundError as exc:
            raise GitHistoryError("git is not installed") from exc
        if done.returncode != 0:
            raise GitHistoryError(f"git {' '.join(args[:2])} in {self.path}: {done.stderr.strip() or 'failed'}")
        return done.stdout

    @property
    def owner(self) -> str:
        """The repository's owner (``pallets`` of ``pallets/werkzeug``)."""
        return self.repo.split("/", 1)[0]

    def _remote_repo(self) -> str:
        try:
            url = self._git("remote", "get-url", "origin").strip()
        except GitHistoryError:
            url = ""
        match = _GITHUB_REMOTE.search(url)
        if match is None:
            raise GitHistoryError(f"{self.path}: origin does not name a GitHub repository; give --repo owner/name")
        return match.group(1)

    def _default_branch(self) -> str:
        for ref in ("refs/remotes/origin/HEAD", "HEAD"):
            try:
                name = self._git("symbolic-ref", "--short", ref).strip()
            except GitHistoryError:
                continue
            return name.removeprefix("origin/") if ref != "HEAD" and self._has(name.removeprefix("origin/")) else name
        raise GitHistoryError(f"{self.path}: no default branch (detached HEAD); give --branch")

    def _has(self, branch: str) -> bool:
        try:
            self._git("rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}")
        except GitHistoryError:
            return False
        return True

    def show(self, path: str) -> str | None:
        """The text of ``path`` in the branch's newest tree, or None if it has none."""
        try:
            return self._git("show", f"{self.branch}:{path}")
        except GitHistoryError:
            return None

    def files(self) -> list[str]:
        """The paths of the branch's newest tree."""
        return self._git("ls-tree", "-r", "--name-only", self.branch).splitlines()

    def touches(self) -> dict[str, list[str]]:
        """Every commit the branch reaches (merges by their first parent), by sha: the paths it changed."""
        # Without --diff-merges git lists no paths for a merge, and a merge of the main line changes
        # what its first parent had: the paths a PR merged there brought.
        out = self._git(
            "log", "--no-renames", "--diff-merges=first-parent", "--name-only", f"--format={_RECORD}%H", self.branch
        )  # fmt: skip
        found: dict[str, list[str]] = {}
        for record in out.split(_RECORD)[1:]:
            sha, _, paths = record.partition("\n")
            found[sha.strip()] = [p for p in paths.splitlines() if p.strip()]
        return found

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
        return reader.finish()

    def _range(self) -> list[str]:
        return [f"--since={self._since}"] if self._since else []

    def count(self) -> int:
        """How many commits of the main line the import reads."""
        return int(self._git("rev-list", "--first-parent", "--count", *self._range(), self.branch).strip() or 0)

    def commits(self) -> list[Commit]:
        """The main line, oldest first, each with the paths it changed against its first parent."""
        out = self._git(
            "log",
            "--first-parent",
            "--reverse",
            "--diff-merges=first-parent",
            "--name-status",
            "--no-renames",
            f"--format={_RECORD}{_FORMAT}{_FIELD}",
            *self._range(),
            self.branch,
        )
        commits = []
        for record in out.split(_RECORD)[1:]:
            sha, parents, author, email, authored, committed, message, status = record.split(_FIELD)
            commit = Commit(sha, parents.split(), author, email, authored, committed, message)
            for line in status.strip("\n").splitlines():
                kind, _, path = line.partition("\t")
                target = {"A": commit.added, "D": commit.removed}.get(kind[:1], commit.modified)
                if path:
                    target.append(path)
            commits.append(commit)
        return commits

    def graph(self) -> dict[str, Commit]:
        """Every commit the branch reaches (no paths), by sha: one ``git log``."""
        out = self._git("log", f"--format={_RECORD}{_FORMAT}", self.branch)
        graph: dict[str, Commit] = {}
        for record in out.split(_RECORD)[1:]:
            sha, parents, author, email, authored, committed, message = record.split(_FIELD)
            graph[sha] = Commit(sha, parents.split(), author, email, authored, committed, message)
        return graph

    @staticmethod
    def _side_lines(commits: list[Commit], graph: dict[str, Commit]) -> dict[str, list[Commit]]:
        """For each merge of the main line, the commits it brought in (not on the main line, not
        brought in by an earlier merge, nor before the range read: ``--since``), newest first."""
        seen = {c.sha for c in commits}
        if commits and commits[0].parents:
            seen |= _ancestors(commits[0].parents[:1], graph)
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

    def events(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(origin, bus event) for every push and merged pull request, in the order they happened:
        the main line's, and the pull requests merged on a side line (a maintenance branch merged
        in) just before the push that brought them."""
        commits = self.commits()
        graph = self.graph()
        self._who = Identities(graph.values(), owner=self.owner)
        brought = self._side_lines(commits, graph)
        self._defined = self.definitions()
        numbers: set[int] = set()
        for commit in commits:
            origin = f"{self.repo}@{commit.sha[:12]}"
            side = brought.get(commit.sha, [])
            by_sha = {c.sha: c for c in side}
            for merged in reversed(side):
                if (found := merged_pull_request(merged)) is None or found.number in numbers:
                    continue
                within = self._brought_by(merged, side, by_sha)
                pull = self._merged_by_whom(merged, within, graph)
                if pull is not None and pull.number not in numbers:
                    numbers.add(pull.number)
                    payload = self._pull_request(merged, pull, within, base=None)
                    yield f"{origin} (#{pull.number})", bus_event("github", "pull_request", payload, merged.committed)
            yield origin, bus_event("github", "push", self._push(commit, side), commit.committed)
            pull = self._merged_by_whom(commit, side, graph)
            if pull is not None and pull.number not in numbers:
                numbers.add(pull.number)
                payload = self._pull_request(commit, pull, side, base=self.branch)
                yield f"{origin} (#{pull.number})", bus_event("github", "pull_request", payload, commit.committed)

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
            pull = replace(pull, title=_default_title(pull, written) or commit.subject)
        if len(commit.parents) > 1 and (pull.head is None or pull.author.lower() == self.owner.lower()):
            authors = [self._who.of(c) for c in written]
            people = [a for a in authors if not is_bot(a)] or authors
            head = graph.get(commit.parents[1])
            if people:  # most_common keeps first-seen order among ties: the newest commit's author
                pull = replace(pull, author=Counter(people).most_common(1)[0][0])
            elif head is not None:
                pull = replace(pull, author=self._who.of(head))
        return pull

    @staticmethod
    def _brought_by(merge: Commit, side: list[Commit], by_sha: Mapping[str, Commit]) -> list[Commit]:
        """The commits a side line's PR merge brought in, newest first: those among ``side``
        (``by_sha``: the same, by sha) its second parents reach and its first parent does not
        (not the maintenance branch's own)."""
        if len(merge.parents) < 2:
            return []
        mine = _ancestors(merge.parents[1:], by_sha) - _ancestors(merge.parents[:1], by_sha)
        return [c for c in side if c.sha in mine]

    def _push(self, commit: Commit, brought: list[Commit]) -> dict[str, Any]:
        head = {
            "id": commit.sha,
            "message": commit.message.strip(),
            "timestamp": commit.committed,
            "url": f"https://github.com/{self.repo}/commit/{commit.sha}",
            "author": {"name": commit.author, "email": commit.email, "username": self._who.of(commit)},
            "added": commit.added,
            "modified": commit.modified,
            "removed": commit.removed,
        }
        # The commits a merge brought in, as a push of it lists them (their paths are the merge's).
        listed = brought[:MAX_MERGED_COMMITS]
        merged = [{"id": c.sha, "message": c.subject, "timestamp": c.committed} for c in reversed(listed)]
        return {
            "ref": f"refs/heads/{self.branch}",
            "before": commit.parents[0] if commit.parents else "0" * 40,
            "after": commit.sha,
            "repository": {"full_name": self.repo, "default_branch": self.branch},
            "pusher": {"name": commit.author, "email": commit.email},
            "sender": {"login": self._who.of(commit)},
            "compare": f"https://github.com/{self.repo}/commit/{commit.sha}",
            "head_commit": head,
            "commits": [*merged, head],
        }

    def _pull_request(
        self, commit: Commit, pull: MergedPullRequest, brought: list[Commit], base: str | None
    ) -> dict[str, Any]:
        """The ``closed`` + ``merged`` payload, with what the history knows beyond a webhook
        (``import``: the commits' messages, the paths the merge changed and the definitions its
        diff changed, for the normalizer)."""
        files = [*commit.added, *commit.modified, *commit.removed] if commit.parents else []
        listed = reversed(brought[:MAX_MERGED_COMMITS])
        messages = [c.message.strip()[:MAX_MESSAGE_CHARS] for c in listed if not _MERGE_PR.match(c.subject)]
        return {
            "action": "closed",
            "repository": {"full_name": self.repo},
            "sender": {"login": self._who.of(commit)},
            "pull_request": {
                "number": pull.number,
                "title": pull.title,
                "body": pull.body,
                "merged": True,
                "merged_at": commit.committed,
                "created_at": commit.authored,
                "merge_commit_sha": commit.sha,
                "html_url": f"https://github.com/{self.repo}/pull/{pull.number}",
                "user": {"login": pull.author},
                "merged_by": {"login": self._who.of(commit)},
                "base": {"ref": base},
                "head": {"ref": pull.head},
            },
            "import": {
                "mergedBy": self._who.of(commit),
                "commits": max(len(brought), 1),
                "commitMessages": messages,
                "files": files,
                "definitions": self._defined.get(commit.sha, []),
            },
        }
