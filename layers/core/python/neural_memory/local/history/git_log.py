"""Reading ``git log`` as git allows a history to be, streamed: NUL-separated fields and paths
(``-z``: a path holding a tab, a quote or a newline is read as it is), bytes decoded as UTF-8 or
else as Latin-1 (a message written before a repository settled on UTF-8 stays readable), and dates
from git's raw form (seconds and offset), so an offset git accepts and Python does not (``+518:00``,
written by an old git from a bad ``TZ``) keeps its instant, in UTC. Nothing a commit holds stops the
read: a date git cannot parse takes its other date's, or the previous commit's.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

MARK = b"\x1e"  # starts a commit's header in ``-z`` output: a status token never does
# sha, parents, author name and address, author and committer dates (``--date=raw``), message
FORMAT = "%x1e%H%x00%P%x00%an%x00%ae%x00%ad%x00%cd%x00%B"
HEADER_FIELDS = 7
_STATUS = frozenset(b"ACDMRTUX")
MAX_OFFSET_MINUTES = 24 * 60 - 1  # what a Python timezone can carry
EPOCH = "1970-01-01T00:00:00+00:00"
READ_CHUNK = 1 << 16


class GitHistoryError(Exception):
    """git failed: not a repository, no such revision, a missing object."""


@dataclass
class Commit:
    """One commit, with the paths it changed against its first parent when they were read
    (a rename as ``renamed`` (old, new, similarity %), its old path also in ``removed`` and its new
    in ``added``, as a webhook lists them)."""

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
    renamed: list[tuple[str, str, int]] = field(default_factory=list)

    @property
    def subject(self) -> str:
        return self.message.strip().split("\n", 1)[0]

    @property
    def paths(self) -> list[str]:
        """Every path it changed, once each."""
        return list(dict.fromkeys([*self.added, *self.modified, *self.removed]))


def text(raw: bytes) -> str:
    """Bytes from git as text: UTF-8, else Latin-1 (every byte is a character: nothing lost)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def git_date(raw: str) -> str | None:
    """git's raw date (``1315449530 +51800``) as ISO 8601: in its own offset when a timezone can
    carry it, else in UTC (the instant is the seconds; only the offset is odd). None when git
    could not read the date at all."""
    seconds, _, offset = raw.strip().partition(" ")
    try:
        instant = datetime.fromtimestamp(int(seconds), UTC)
    except (ValueError, OverflowError, OSError):
        return None
    digits = offset[1:]
    if offset[:1] in ("+", "-") and digits.isdigit() and len(digits) >= 2:
        minutes = int(digits[:-2] or 0) * 60 + int(digits[-2:])
        if minutes <= MAX_OFFSET_MINUTES:
            sign = -1 if offset[0] == "-" else 1
            try:
                return instant.astimezone(timezone(timedelta(minutes=sign * minutes))).isoformat()
            except (ValueError, OverflowError):
                pass
    return instant.isoformat()


class GitLog:
    """``git`` in one clone, read offline (a partial clone's missing objects fail instead of being
    fetched)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._env = {**os.environ, "GIT_NO_LAZY_FETCH": "1", "GIT_TERMINAL_PROMPT": "0"}

    def command(self, *args: str) -> list[str]:
        return ["git", "-c", "core.quotepath=off", "-C", str(self.path), *args]

    def run(self, *args: str) -> str:
        """A short git command's output (text)."""
        try:
            done = subprocess.run(self.command(*args), capture_output=True, check=False, env=self._env)
        except FileNotFoundError as exc:
            raise GitHistoryError("git is not installed") from exc
        if done.returncode != 0:
            why = text(done.stderr).strip() or "failed"
            raise GitHistoryError(f"git {' '.join(args[:2])} in {self.path}: {why}")
        return text(done.stdout)

    def run_bytes(self, *args: str) -> bytes | None:
        """A git command's output as bytes, or None if it failed."""
        try:
            done = subprocess.run(self.command(*args), capture_output=True, check=False, env=self._env)
        except FileNotFoundError as exc:
            raise GitHistoryError("git is not installed") from exc
        return done.stdout if done.returncode == 0 else None

    def tokens(self, *args: str) -> Iterator[bytes]:
        """The NUL-separated tokens of a git command's output, as it streams (a history's log is
        never held whole); GitHistoryError after the last if git failed."""
        with tempfile.TemporaryFile() as errors:
            try:
                process = subprocess.Popen(self.command(*args), stdout=subprocess.PIPE, stderr=errors, env=self._env)
            except FileNotFoundError as exc:
                raise GitHistoryError("git is not installed") from exc
            with process:
                assert process.stdout is not None
                yield from _split(process.stdout)
            if process.returncode != 0:
                errors.seek(0)
                why = text(errors.read()).strip().splitlines()[-1:] or ["failed"]
                raise GitHistoryError(f"git {' '.join(args[:2])} in {self.path}: {why[0]}")

    def commits(self, *args: str, paths: bool = False, max_message: int | None = None) -> Iterator[Commit]:
        """The commits ``git log -z --format=FORMAT --date=raw ARGS`` lists, as they stream; with
        ``paths`` (ARGS holding ``--name-status``), each with the paths it changed."""
        stream = self.tokens("log", "-z", f"--format={FORMAT}", "--date=raw", *args)
        previous = EPOCH
        commit: Commit | None = None
        header: list[bytes] = []  # a header being read: its fields are tokens whatever they hold
        pending: list[bytes] = []  # a status and the paths read after it
        for token in stream:
            if header:
                header.append(token)
                if len(header) == HEADER_FIELDS:
                    commit = _commit(header, previous, max_message)
                    previous = commit.committed
                    header, pending = [], []
            elif token.startswith(MARK) and not pending:  # a path may start with it; a status never
                if commit is not None:
                    yield commit
                    commit = None
                header = [token[1:]]
            elif commit is not None and paths:
                pending = _status(commit, pending, token)
        if commit is not None:
            yield commit


def _split(stream: IO[bytes]) -> Iterator[bytes]:
    rest = b""
    while chunk := stream.read(READ_CHUNK):
        parts = (rest + chunk).split(b"\0")
        rest = parts.pop()
        yield from parts
    if rest:
        yield rest


def _commit(header: list[bytes], previous: str, max_message: int | None) -> Commit:
    sha, parents, name, email, authored_raw, committed_raw, message = (text(part) for part in header)
    authored, committed = git_date(authored_raw), git_date(committed_raw)
    committed = committed or authored or previous
    body = message[:max_message] if max_message else message
    return Commit(sha.strip(), parents.split(), name, email, authored or committed, committed, body)


def _status(commit: Commit, pending: list[bytes], token: bytes) -> list[bytes]:
    """One token of a commit's ``--name-status -z`` list: a status (``M``, ``R100``; git puts a
    newline before the first), then one path, or two for a rename or copy."""
    if not pending:
        status = token.lstrip(b"\n")
        if status[:1] and status[0] in _STATUS:
            return [status]
        return []  # not a status: nothing this reader knows
    pending = [*pending, token]
    kind = pending[0][:1]
    if kind in (b"R", b"C") and len(pending) < 3:
        return pending
    paths = [text(p) for p in pending[1:]]
    if kind == b"R":
        similarity = pending[0][1:]
        commit.renamed.append((paths[0], paths[1], int(similarity) if similarity.isdigit() else 0))
        commit.removed.append(paths[0])
        commit.added.append(paths[1])
    elif kind == b"C":
        commit.added.append(paths[1])
    elif kind == b"A":
        commit.added.append(paths[0])
    elif kind == b"D":
        commit.removed.append(paths[0])
    else:
        commit.modified.append(paths[0])
    return []
