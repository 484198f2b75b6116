"""Repositories a test builds with the git binary: ordinary commits through ``git commit``, and
commit objects written byte for byte (``git hash-object --literally``) for what only an old or odd
git writes: an offset like ``+51800``, a date git cannot read, an empty name, a message in Latin-1."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

ANN = ("Ann Lee", "12345+annlee@users.noreply.github.com")
BO = ("Bo Chen", "bo@example.org")


def git(repo: Path, *args: str, who: tuple[str, str] = ANN, at: str = "2022-01-10T10:00:00+00:00") -> str:
    """``git ARGS`` in ``repo`` as ``who`` at ``at``; its output, stripped."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": who[0],
        "GIT_AUTHOR_EMAIL": who[1],
        "GIT_COMMITTER_NAME": who[0],
        "GIT_COMMITTER_EMAIL": who[1],
        "GIT_AUTHOR_DATE": at,
        "GIT_COMMITTER_DATE": at,
    }
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit_file(repo: Path, path: str, body: str, message: str, **kwargs: object) -> str:
    """Write ``path`` and commit it; the new commit's sha."""
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body, encoding="utf-8")
    git(repo, "add", path, **kwargs)  # type: ignore[arg-type]
    git(repo, "commit", "-q", "-m", message, **kwargs)  # type: ignore[arg-type]
    return git(repo, "rev-parse", "HEAD")


def init(repo: Path, branch: str = "main") -> Path:
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", branch)
    return repo


def write_blob(repo: Path, body: bytes) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input=body, capture_output=True, check=True
    )
    return done.stdout.decode().strip()


def write_tree(repo: Path, entries: dict[bytes, tuple[str, str]]) -> str:
    """A tree of ``entries`` (path -> (mode, object)), through a fresh index: paths may hold any
    byte but NUL (a tab, a quote, a newline, Latin-1)."""
    index = repo / ".git" / "test-index"
    index.unlink(missing_ok=True)
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    listing = b"".join(f"{mode} {sha}\t".encode() + path + b"\0" for path, (mode, sha) in entries.items())
    subprocess.run(
        ["git", "-C", str(repo), "update-index", "--add", "-z", "--index-info"],
        input=listing,
        env=env,
        capture_output=True,
        check=True,
    )
    done = subprocess.run(["git", "-C", str(repo), "write-tree"], env=env, capture_output=True, check=True)
    return done.stdout.decode().strip()


def raw_commit(
    repo: Path,
    tree: str,
    parents: list[str],
    *,
    author: bytes = b"Ann Lee <ann@example.org> 1641808800 +0000",
    committer: bytes | None = None,
    message: bytes = b"Change\n",
    encoding: bytes | None = None,
) -> str:
    """A commit object written as given (``git hash-object --literally``: git checks nothing)."""
    lines = [b"tree " + tree.encode(), *(b"parent " + p.encode() for p in parents)]
    lines += [b"author " + author, b"committer " + (committer or author)]
    if encoding is not None:
        lines.append(b"encoding " + encoding)
    body = b"\n".join(lines) + b"\n\n" + message
    done = subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-t", "commit", "-w", "--literally", "--stdin"],
        input=body,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode().strip()


def squashed_history(root: Path, count: int, subject: str) -> None:
    """``count`` squashed pull requests on main (``subject`` formatted with ``n``, then ``(#n)``),
    written through fast-import (quick)."""
    init(root)
    stream = []
    for n in range(1, count + 1):
        message = f"{subject.format(n=n)} (#{n})".encode()
        stream += [
            b"commit refs/heads/main",
            b"author Ann Lee <ann@example.org> %d +0000" % (1641808800 + n * 60),
            b"committer Ann Lee <ann@example.org> %d +0000" % (1641808800 + n * 60),
            b"data %d" % len(message),
            message,
            b"M 100644 inline src/part%d.py" % (n % 40),
            b"data 2",
            b"%02d" % (n % 100),
            b"",
        ]
    subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"], input=b"\n".join(stream) + b"\n", check=True)


def old_github_history(root: Path, days_ago: int = 90) -> Path:
    """A clone of ``acme/console`` (its origin on GitHub) whose newest commit is ``days_ago`` days
    old: pushes by Ann and Bo, and pull requests merged from branches ("Merge pull request #n"),
    among them #12 "Retry webhook deliveries with exponential backoff" by Bo."""
    from datetime import UTC, datetime, timedelta

    init(root)
    git(root, "remote", "add", "origin", "https://github.com/acme/console.git")
    newest = datetime.now(UTC) - timedelta(days=days_ago)

    def at(days_before: int) -> str:
        return (newest - timedelta(days=days_before)).isoformat()

    commit_file(root, "README.md", "# console\n", "Initial commit", at=at(40))
    commit_file(root, "src/auth/session.ts", "export const ttl = 60\n", "Session TTL of one hour", at=at(35))
    pulls = [
        (10, "ann/login-form", "Add the login form", "src/ui/login.tsx", ANN, 30),
        (11, "bo/rate-limits", "Rate limit the public API per key", "src/api/limits.ts", BO, 20),
        (12, "bo/webhook-retries", "Retry webhook deliveries with exponential backoff", "src/hooks/retry.ts", BO, 10),
    ]
    for number, branch, title, path, who, days in pulls:
        git(root, "checkout", "-q", "-b", branch, who=who, at=at(days + 1))
        commit_file(root, path, f"// {title}\n", title, who=who, at=at(days + 1))
        git(root, "checkout", "-q", "main", who=who, at=at(days))
        message = f"Merge pull request #{number} from acme/{branch}\n\n{title}"
        git(root, "merge", "-q", "--no-ff", branch, "-m", message, who=ANN, at=at(days))
    commit_file(root, "src/auth/session.ts", "export const ttl = 120\n", "Session TTL of two hours", at=at(0))
    return root
