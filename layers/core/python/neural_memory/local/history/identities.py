"""Who a commit's author is on GitHub (``Identities``): deciding, from the whole history's commits,
which names and addresses are one person and which login they are known by."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import TYPE_CHECKING

from neural_memory.engineering.experts import is_bot
from neural_memory.local.history.merged_pulls import MERGE_PR

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from neural_memory.local.history.git_log import Commit

__all__ = ["Identities"]

_NOREPLY = re.compile(r"^(?:\d+\+)?([^@]+)@users\.noreply\.github\.com$")
FORK_VOTES = 2  # PRs from one fork whose branch an address wrote most of, to take its login
BRANCH_WALK = 50  # of a PR's branch's commits read to say who wrote it
ADDRESS_NAMES = 3  # names one address may carry and still be one person ("sloria", "Steven Loria")
_PLACEHOLDERS = frozenset({"", "none@none", "you@example.com", "root@localhost", "nobody@nowhere"})


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
        heads = {m.group(2).lower(): m.group(2) for c in listed if (m := MERGE_PR.match(c.subject))}
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
        match = MERGE_PR.match(commit.subject)
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
