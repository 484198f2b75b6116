"""The payloads GitHub's webhooks would have delivered for a clone's main line (``history.git``
plans which): a commit's ``push``, with the commits a merge brought in, and a merged pull request's
``closed`` + ``merged`` ``pull_request``, with what the history knows beyond a webhook (``import``:
the commits' messages, the paths and definitions the merge changed, and the later names of the
paths a rename gave another file name, which the normalizer reads)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.local.history.merged_pulls import MERGE_PR
from neural_memory.trust.team import COMMITTER

if TYPE_CHECKING:
    from neural_memory.local.history.git_log import Commit
    from neural_memory.local.history.identities import Identities
    from neural_memory.local.history.merged_pulls import MergedPullRequest
    from neural_memory.local.history.renames import PathNames

MAX_MERGED_COMMITS = 50  # a merge's push lists at most this many of the commits it brought in
MAX_MESSAGE_CHARS = 2_000  # of each commit's message in a PR's payload (the normalizer keeps 500 of a body)
MAX_LATER_NAMES = 100  # later names an event lists for its paths


def later_names(names: PathNames, paths: list[str], index: int) -> dict[str, str]:
    """The paths (changed at main-line commit ``index``) that a later rename gave another file
    name, with their newest: what the path is called now is searched with the old event
    (``git mv cookies.py jar.py``: who knows "jar" wrote cookies.py). A move that keeps the
    file's name (into ``src/``) needs none: its words are the same."""
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


def author(who: Identities, commit: Commit) -> dict[str, str]:
    """A commit's author as a payload names them; a name git left empty reads as its address."""
    login = who.of(commit)
    return {"name": commit.author or login, "email": commit.email, "username": login}


def push(
    repo: str, branch: str, who: Identities, names: PathNames, commit: Commit, brought: list[Commit], index: int
) -> dict[str, Any]:
    """The ``push`` payload of main-line commit ``index``, listing the commits it ``brought`` in."""
    head = {
        "id": commit.sha,
        "message": commit.message.strip(),
        "timestamp": commit.committed,
        "url": f"https://github.com/{repo}/commit/{commit.sha}",
        "author": author(who, commit),
        "added": commit.added,
        "modified": commit.modified,
        "removed": commit.removed,
    }
    # The commits a merge brought in, as a push of it lists them (their paths are the merge's).
    listed = brought[:MAX_MERGED_COMMITS]
    merged = [{"id": c.sha, "message": c.subject, "timestamp": c.committed} for c in reversed(listed)]
    payload = {
        "ref": f"refs/heads/{branch}",
        "before": commit.parents[0] if commit.parents else "0" * 40,
        "after": commit.sha,
        "repository": {"full_name": repo, "default_branch": branch},
        "pusher": {"name": commit.author or who.of(commit), "email": commit.email},
        "sender": {"login": who.of(commit)},
        "compare": f"https://github.com/{repo}/commit/{commit.sha}",
        "head_commit": head,
        "commits": [*merged, head],
    }
    later = later_names(names, commit.paths, index)
    if later:
        payload["import"] = {"laterNames": later}
    return payload


def pull_request(
    repo: str,
    who: Identities,
    names: PathNames,
    defined: dict[str, list[str]],
    commit: Commit,
    pull: MergedPullRequest,
    brought: list[Commit],
    base: str | None,
    index: int,
) -> dict[str, Any]:
    """The ``closed`` + ``merged`` payload, with what the history knows beyond a webhook
    (``import``: the commits' messages, the paths the merge changed and the definitions its
    diff changed, for the normalizer)."""
    files = commit.paths if commit.parents else []
    listed = reversed(brought[:MAX_MERGED_COMMITS])
    messages = [c.message.strip()[:MAX_MESSAGE_CHARS] for c in listed if not MERGE_PR.match(c.subject)]
    facts: dict[str, Any] = {
        "mergedBy": who.of(commit),
        "commits": max(len(brought), 1),
        "commitMessages": messages,
        "files": files,
        "definitions": defined.get(commit.sha, []),
    }
    later = later_names(names, files, index)
    if later:
        facts["laterNames"] = later
    return {
        "action": "closed",
        "repository": {"full_name": repo},
        "sender": {"login": who.of(commit)},
        "pull_request": {
            "number": pull.number,
            "title": pull.title,
            "body": pull.body,
            "merged": True,
            "merged_at": commit.committed,
            "created_at": commit.authored,
            "merge_commit_sha": commit.sha,
            "html_url": f"https://github.com/{repo}/pull/{pull.number}",
            "user": {"login": pull.author},
            # Merged into the default branch: its author has commits there (trust/team.py).
            "author_association": COMMITTER,
            "merged_by": {"login": who.of(commit)},
            "base": {"ref": base},
            "head": {"ref": pull.head},
        },
        "import": facts,
    }
