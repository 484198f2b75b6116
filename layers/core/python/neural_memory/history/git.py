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
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import unicodedata
from collections import Counter, deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neural_memory.engineering.experts import is_bot
from neural_memory.history.cursor import Checkpoint
from neural_memory.history.definitions import DiffDefinitions, attributes
from neural_memory.history.events import bus_event
from neural_memory.history.git_log import Commit, GitHistoryError, GitLog, text
from neural_memory.history.renames import PathNames

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

__all__ = ["Commit", "GitHistory", "GitHistoryError", "Identities", "MergedPullRequest", "merged_pull_request"]

_RECORD = "\x1e"
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
    nobody's: its commits keep their own names. Last, at a personal address, a name whose letters and
    digits are a login the history knows ("Tom Christie" and the ``tomchristie`` of a noreply
    address, of a fork pull requests came from, or of another commit's author name) is that login.
    ``joined`` says who was joined, and why."""

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
        self._why: dict[str, str] = {}  # an actor's first join, by reason
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
                self._why.setdefault(login, "a noreply address" if match else "an address named like a fork")
        personal = {e: n.most_common(1)[0][0] for e, n in names.items() if not _shared_address(e, n)}
        for email, login in _fork_owners(branches, owner, set(personal)).items():
            if email not in self._by_email and personal[email] not in self._by_name:
                self._by_email[email] = login
                self._by_name.setdefault(personal[email], login)
                self._why.setdefault(login, "wrote the branches that fork sent")
        for email, name in personal.items():
            if email not in self._by_email and len(names[email]) > 1:
                self._by_email[email] = self._by_name.get(name, name)
                self._why.setdefault(self._by_email[email], "one address")
        logins = {*self._by_email.values(), *self._by_name.values(), *heads.values()}
        logins |= {n for counted in names.values() for n in counted if _LOGIN.fullmatch(n)}
        self._personal = set(personal)  # where a name is one person's: not a placeholder's
        self._alias = _spelled_logins(names, self._personal, logins)  # a name -> the login its letters spell
        for login in self._alias.values():
            self._why.setdefault(login, "a name that spells a login")
        self._seen: dict[str, set[str]] = {}  # each actor's names, as written
        for commit in listed:
            self._seen.setdefault(self.of(commit), set()).add(unicodedata.normalize("NFC", commit.author))

    def of(self, commit: Commit) -> str:
        """The author's login, or their name when the history never says it (in one Unicode form:
        git keeps "ä" as one character or two, as the author's machine wrote it); a commit with no
        name is its address's (its local part), else "unknown"."""
        match = _NOREPLY.match(commit.email)
        if match:
            return match.group(1)
        name = unicodedata.normalize("NFC", commit.author).strip()
        found = self._by_email.get(commit.email.lower()) or self._by_name.get(name) or name
        if commit.email.lower() in self._personal:
            found = self._alias.get(found, found)
        return found or commit.email.strip().partition("@")[0] or "unknown"

    def joined(self) -> list[tuple[list[str], str]]:
        """Each actor the history knows under more than one name: the actor first, then its other
        names, and why they are one; the most names first."""
        found = []
        for actor, seen in self._seen.items():
            others = sorted(n for n in seen if n and n != actor)
            if len(seen) > 1 and others:  # a login for one name alone ("Ann Lee" is annlee) joins no one
                found.append(([actor, *others], self._why.get(actor, "one address")))
        found.sort(key=lambda pair: (-len(pair[0]), pair[0][0]))
        return found


def _spelled_logins(names: Mapping[str, Counter[str]], personal: set[str], logins: set[str]) -> dict[str, str]:
    """The names written at ``personal`` addresses (``names``: each address's) whose letters and
    digits spell one of ``logins`` ("Tom Christie": ``tomchristie``), with that login."""
    by_letters = {_letters(login): login for login in sorted(logins) if len(_letters(login)) >= MIN_LOGIN_LETTERS}
    found = {}
    for email, counted in names.items():
        if email not in personal:
            continue
        for name in counted:
            login = by_letters.get(_letters(name))
            if login is not None and login != name and not _LOGIN.fullmatch(name):
                found[name] = login
    return found


_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")  # how GitHub spells a login
MIN_LOGIN_LETTERS = 6  # a shorter login ("al", "bob") is spelled by too many names to join on


def _letters(name: str) -> str:
    """A name's letters and digits, lower-cased: "Tom Christie" and "tomchristie" spell the same."""
    return re.sub(r"[^0-9a-z]", "", unicodedata.normalize("NFKD", name).lower())


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


GRAPH_MESSAGE_CHARS = 8_000  # of each commit's message the whole history's graph holds
CHANGES_MESSAGE_CHARS = 200  # the same, for the paths every commit changed (eval-history's truth)
MAX_LATER_NAMES = 100  # later names an event lists for its paths
REMOTE_HOPS = 3  # local clones of clones followed to find a GitHub remote
# Files of the newest tree whose GitHub links may name the repository, most telling first.
PROJECT_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "package.json", "Cargo.toml", "README.md", "README.rst")
_GITHUB_LINK = re.compile(r"github\.com[:/]([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9_.-]+)")
_NOT_OWNERS = frozenset({"sponsors", "orgs", "apps", "features", "marketplace", "topics", "settings", "users", "login"})
LOCAL_OWNER = "local"  # the owner of a repository no remote or project file names
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
        found = _github_remote(self.path, REMOTE_HOPS)
        if found is not None:
            return found
        named = self._linked_repo()
        if named is not None:
            repo, where = named
            self.notes.append(
                f"repository {repo}: no remote is on GitHub, and {where} links to it (give --repo owner/name otherwise)"
            )
            return repo
        repo = f"{LOCAL_OWNER}/{self._folder()}"
        self.warnings.append(
            f"no remote or project file names the repository on GitHub: importing it as {repo}; give --repo "
            "owner/name (as GitHub names it) so that webhook deliveries later update these observations"
        )
        return repo

    def _folder(self) -> str:
        try:
            top = self._git("rev-parse", "--show-toplevel").strip()
        except GitHistoryError:  # a bare repository
            top = ""
        name = Path(top or self.path.resolve()).name
        return re.sub(r"[^A-Za-z0-9_.-]+", "-", name.removesuffix(".git")) or "repository"

    def _linked_repo(self) -> tuple[str, str] | None:
        """The GitHub repository the project's files (``PROJECT_FILES``) link to, and which file:
        the one named most, when it is the clone folder's name or at least two thirds of the links
        name it; None when no name stands out."""
        counts: Counter[str] = Counter()
        spelled: dict[str, tuple[str, str]] = {}
        for name in PROJECT_FILES:
            body = self.show(name)
            for owner, linked in _GITHUB_LINK.findall(body or ""):
                repo = linked.rstrip(".").removesuffix(".git")
                if owner.lower() in _NOT_OWNERS or not repo:
                    continue
                key = f"{owner}/{repo}".lower()
                counts[key] += 1
                spelled.setdefault(key, (f"{owner}/{repo}", name))
        if not counts:
            return None
        folder = self._folder().lower()
        mine = Counter({k: n for k, n in counts.items() if k.split("/", 1)[1] == folder})
        pool = mine or counts
        best, n = pool.most_common(1)[0]
        if 3 * n < 2 * pool.total() or (not mine and n < 2):
            return None
        return spelled[best]

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
        brought = self._side_lines(commits, graph)
        numbers: set[int] = set()
        steps: list[_Step] = []
        for index, commit in enumerate(commits):
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
        if step.pull is None:
            return bus_event("github", "push", self._push(step.commit, step.brought, step.index), step.commit.committed)
        payload = self._pull_request(step.commit, step.pull, step.brought, step.base, step.index)
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

    def _later_names(self, paths: list[str], index: int) -> dict[str, str]:
        """The paths (changed at main-line commit ``index``) that a later rename gave another file
        name, with their newest: what the path is called now is searched with the old event
        (``git mv cookies.py jar.py``: who knows "jar" wrote cookies.py). A move that keeps the
        file's name (into ``src/``) needs none: its words are the same."""
        names = self.names()
        if not names:
            return {}
        later = {}
        for path in paths:
            newest = names.newest(path, index)
            if newest.rsplit("/", 1)[-1] != path.rsplit("/", 1)[-1]:
                later[path] = newest
            if len(later) >= MAX_LATER_NAMES:
                break
        return later

    def _author(self, commit: Commit) -> dict[str, str]:
        """A commit's author as a payload names them; a name git left empty reads as its address."""
        login = self._who.of(commit)
        return {"name": commit.author or login, "email": commit.email, "username": login}

    def _push(self, commit: Commit, brought: list[Commit], index: int) -> dict[str, Any]:
        head = {
            "id": commit.sha,
            "message": commit.message.strip(),
            "timestamp": commit.committed,
            "url": f"https://github.com/{self.repo}/commit/{commit.sha}",
            "author": self._author(commit),
            "added": commit.added,
            "modified": commit.modified,
            "removed": commit.removed,
        }
        # The commits a merge brought in, as a push of it lists them (their paths are the merge's).
        listed = brought[:MAX_MERGED_COMMITS]
        merged = [{"id": c.sha, "message": c.subject, "timestamp": c.committed} for c in reversed(listed)]
        payload = {
            "ref": f"refs/heads/{self.branch}",
            "before": commit.parents[0] if commit.parents else "0" * 40,
            "after": commit.sha,
            "repository": {"full_name": self.repo, "default_branch": self.branch},
            "pusher": {"name": commit.author or self._who.of(commit), "email": commit.email},
            "sender": {"login": self._who.of(commit)},
            "compare": f"https://github.com/{self.repo}/commit/{commit.sha}",
            "head_commit": head,
            "commits": [*merged, head],
        }
        later = self._later_names(commit.paths, index)
        if later:
            payload["import"] = {"laterNames": later}
        return payload

    def _pull_request(
        self, commit: Commit, pull: MergedPullRequest, brought: list[Commit], base: str | None, index: int
    ) -> dict[str, Any]:
        """The ``closed`` + ``merged`` payload, with what the history knows beyond a webhook
        (``import``: the commits' messages, the paths the merge changed and the definitions its
        diff changed, for the normalizer)."""
        files = commit.paths if commit.parents else []
        listed = reversed(brought[:MAX_MERGED_COMMITS])
        messages = [c.message.strip()[:MAX_MESSAGE_CHARS] for c in listed if not _MERGE_PR.match(c.subject)]
        facts: dict[str, Any] = {
            "mergedBy": self._who.of(commit),
            "commits": max(len(brought), 1),
            "commitMessages": messages,
            "files": files,
            "definitions": self._defined.get(commit.sha, []),
        }
        later = self._later_names(files, index)
        if later:
            facts["laterNames"] = later
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
            "import": facts,
        }


def _github_remote(path: Path, hops: int) -> str | None:
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
            if base.is_dir() and (found := _github_remote(base, hops - 1)) is not None:
                return found
    return None
