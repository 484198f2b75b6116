"""GitHub webhooks delivered as EventBridge events: ``detail-type`` is the ``X-GitHub-Event``
name and ``detail`` the webhook payload."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from neural_memory.ingest.chunking import DEFINITIONS_LINE, PATHS_LINE
from neural_memory.ingest.normalizers.base import (
    MalformedEvent,
    Normalized,
    Skipped,
    UnsupportedEvent,
    dig,
    first_line,
)
from neural_memory.models import MAX_CODE_PATHS, ObservationIn
from neural_memory.trust.team import ASSOCIATION, COMMITTER

_ZERO_SHA = "0" * 40
# What an import adds to a pull request's content (its commits' subjects and changed paths), kept
# in metadata too so a later webhook delivery, which carries none of it, keeps it
# (``ingest.lifecycle.carried_over``).
IMPORTED_TEXT = "importedText"
IMPORTED_FACTS = ("reviewers", "mergedBy", "commits", IMPORTED_TEXT)
MAX_IMPORTED_COMMITS = 50
MAX_IMPORTED_FILES = 100
MAX_IMPORTED_DEFINITIONS = 30
# What a function's name can be (an event on the bus can say anything under ``import``).
_NAME = re.compile(r"[A-Za-z_$][\w$]{0,199}")
# JSON characters of the imported text: metadata holds it, within ``MAX_METADATA_BYTES`` in all.
MAX_IMPORTED_TEXT = 12_000
MAX_COMMIT_BODY = 500  # characters of one commit's body in a pull request's content
MAX_PATH_CHARS = 500  # a code ref path's limit (``CodeRef.paths``)


def normalize(detail_type: str, payload: dict[str, Any], event_time: str | None) -> Normalized:
    """Observations from one GitHub webhook payload."""
    handlers = {
        "push": _push,
        "pull_request": _pull_request,
        "issues": _issue,
        "issue_comment": _issue_comment,
        "release": _release,
    }
    handler = handlers.get(detail_type)
    if handler is None:
        raise UnsupportedEvent(f"GitHub event {detail_type!r} is not supported")
    try:
        return handler(payload, event_time)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise MalformedEvent(f"GitHub {detail_type} payload is malformed: {where}: {first['msg']}") from exc


def _repo(payload: dict[str, Any]) -> str:
    repo = dig(payload, "repository", "full_name")
    if not isinstance(repo, str):
        raise MalformedEvent("GitHub payload has no repository.full_name")
    return repo


def _association(written: dict[str, Any]) -> str:
    """Who wrote a pull request, issue or comment, as GitHub says it (``author_association``);
    ``NONE`` when the payload does not say (``trust/team.py``)."""
    value = written.get("author_association")
    return value.upper() if isinstance(value, str) and value.strip() else "NONE"


def _actor(payload: dict[str, Any], *path: str) -> tuple[str | None, bool]:
    """The acting login and whether it is a bot (kept, and marked: bot activity is still history)."""
    user = dig(payload, *path) if path else payload.get("sender")
    login = user.get("login") if isinstance(user, dict) else None
    is_bot = isinstance(user, dict) and (user.get("type") == "Bot" or str(login or "").endswith("[bot]"))
    return login, is_bot


def _push(payload: dict[str, Any], event_time: str | None) -> Normalized:
    repo = _repo(payload)
    ref = str(payload.get("ref", ""))
    branch = ref.removeprefix("refs/heads/")
    after = str(payload.get("after", ""))
    if payload.get("deleted") or after == _ZERO_SHA:
        return Normalized(skipped=Skipped(f"branch deletion of {ref} in {repo}"))
    listed = payload.get("commits") or []
    if not isinstance(listed, list):
        raise MalformedEvent("commits is not a list")
    commits = [c for c in listed if isinstance(c, dict)]
    head = payload.get("head_commit") if isinstance(payload.get("head_commit"), dict) else None
    message = (head or {}).get("message") or (commits[-1].get("message") if commits else "")
    lines = [f"- {first_line(c.get('message'), field='commits.message')} ({str(c.get('id', ''))[:7]})" for c in commits]
    forced = bool(payload.get("forced"))
    content = f"{len(commits)} commit(s) pushed to {branch} in {repo}" + (" (force push)" if forced else "")
    if lines:
        content += ":\n" + "\n".join(lines)
    login, is_bot = _actor(payload)
    paths = _touched(commits)
    if paths:  # what it touched is searched with what it says (who knows "cookie handling": cookies.py)
        content += f"\n{PATHS_LINE}{_listed(paths[:MAX_IMPORTED_FILES], _later_names(payload))}"
    observation = ObservationIn.model_validate(
        {
            "id": f"github-push-{repo.replace('/', '.')}-{after[:12]}",
            "source": "github",
            "sourceType": "push",
            "observationType": "push",
            "actorName": login or dig(payload, "pusher", "name"),
            "occurredAt": (head or {}).get("timestamp") or event_time,
            "title": f"Push to {branch}: {first_line(message, field='head_commit.message') or after[:7]}",
            "content": content,
            "url": payload.get("compare") or (head or {}).get("url"),
            "metadata": {
                "repo": repo,
                "branch": branch,
                "after": after,
                "commitSha": after,  # the head commit: what a deployment of this push carries
                # Only pushes to it mark claims stale (engineering/staleness.py).
                **(
                    {"defaultBranch": default}
                    if isinstance(default := dig(payload, "repository", "default_branch"), str)
                    else {}
                ),
                "commits": len(commits),
                "forced": forced,
                "bot": is_bot,
                ASSOCIATION: COMMITTER,  # commits pushed to the repository itself
                # What it deleted: the change that removes a file outweighs one that touched it
                # (engineering/staleness.py names it as what made a note about it stale).
                **({"removedPaths": removed} if (removed := _removed(commits)) else {}),
            },
            "codeRefs": [{"repository": repo, "paths": paths}] if paths else None,
        }
    )
    return Normalized(observations=[observation])


def _later_names(payload: dict[str, Any]) -> dict[str, str]:
    """What an import knows beyond a webhook: the name a path took later, when a rename gave the
    file another (``import.laterNames``), so the event is found by the file's name today."""
    later = dig(payload, "import", "laterNames")
    if not isinstance(later, dict):
        return {}
    return {
        old: new
        for old, new in later.items()
        if isinstance(old, str) and isinstance(new, str) and 0 < len(new) <= MAX_PATH_CHARS
    }


def _listed(paths: list[str], later: dict[str, str]) -> str:
    """Paths as content lists them: ``cookies.py (now jar.py)`` for one renamed since."""
    return ", ".join(f"{p} (now {later[p]})" if p in later else p for p in paths)


def _touched(commits: list[dict[str, Any]]) -> list[str]:
    """The paths the commits added, modified or removed, once each, in order, at most
    ``MAX_CODE_PATHS`` (GitHub lists up to 3,000 per commit; the rest of a huge push is not tracked)."""
    paths: dict[str, None] = {}
    for commit in commits:
        for kind in ("added", "modified", "removed"):
            listed = commit.get(kind)
            if isinstance(listed, list):
                paths.update((p, None) for p in listed if isinstance(p, str) and 0 < len(p) <= MAX_PATH_CHARS)
    return list(paths)[:MAX_CODE_PATHS]


MAX_REMOVED_PATHS = 100  # of a push's deleted paths kept in its metadata


def _removed(commits: list[dict[str, Any]]) -> list[str]:
    """The paths the push's commits deleted and none of its later commits added back."""
    gone: dict[str, None] = {}
    for commit in commits:
        added = commit.get("added")
        for path in added if isinstance(added, list) else []:
            gone.pop(path, None)
        listed = commit.get("removed")
        if isinstance(listed, list):
            gone.update((p, None) for p in listed if isinstance(p, str) and 0 < len(p) <= MAX_PATH_CHARS)
    return list(gone)[:MAX_REMOVED_PATHS]


def _pull_request(payload: dict[str, Any], event_time: str | None) -> Normalized:
    repo = _repo(payload)
    action = payload.get("action")
    pr = payload.get("pull_request")
    if not isinstance(pr, dict):
        raise MalformedEvent("GitHub pull_request payload has no pull_request object")
    if action == "opened":
        observation_type, occurred = "pull_request_opened", pr.get("created_at")
    elif action == "closed" and pr.get("merged"):
        observation_type, occurred = "pull_request_merged", pr.get("merged_at")
    elif action == "closed":
        observation_type, occurred = "pull_request_closed", pr.get("closed_at")
    else:
        return Normalized(skipped=Skipped(f"pull_request action {action!r} is not observed"))
    number = pr.get("number")
    title = first_line(pr.get("title"), field="pull_request.title")
    login, is_bot = _actor(pr, "user")
    imported, files = _imported_facts(payload)
    body = str(pr.get("body") or "")
    if isinstance(imported.get(IMPORTED_TEXT), str):  # what it did, searched beside what it says
        body = f"{body}\n\n{imported[IMPORTED_TEXT]}".strip()
    observation = ObservationIn.model_validate(
        {
            "id": f"github-pr-{repo.replace('/', '.')}-{number}-{observation_type}",
            "source": "github",
            "sourceType": "pull_request",
            "observationType": observation_type,
            "actorName": login or dig(payload, "sender", "login"),
            "occurredAt": occurred or pr.get("updated_at") or event_time,
            "title": f"PR #{number} {observation_type.removeprefix('pull_request_')}: {title}",
            "content": body,
            "url": pr.get("html_url"),
            "metadata": {
                "repo": repo,
                "number": number,
                "base": dig(pr, "base", "ref"),
                "head": dig(pr, "head", "ref"),
                "bot": is_bot,
                ASSOCIATION: _association(pr),
                # Only once merged: GitHub also names a test merge commit for an open pull request.
                **({"commitSha": pr["merge_commit_sha"]} if _merged_with_sha(pr) else {}),
                **imported,
            },
            **({"codeRefs": [{"repository": repo, "paths": files}]} if files else {}),
        }
    )
    return Normalized(observations=[observation])


def _imported_facts(payload: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """What only ``neural-memory import github`` puts in a pull request payload (``import``: the
    reviewers, the merger, the commit count and the changed files, read from the REST API): extra
    metadata and code refs. A webhook carries no ``import``, so its observation is unchanged."""
    facts = payload.get("import")
    if not isinstance(facts, dict):
        return {}, []
    metadata: dict[str, Any] = {}
    reviewers = facts.get("reviewers")
    if isinstance(reviewers, list):
        metadata["reviewers"] = [r for r in reviewers if isinstance(r, str)]
    if isinstance(facts.get("mergedBy"), str):
        metadata["mergedBy"] = facts["mergedBy"]
    if isinstance(facts.get("commits"), int) and not isinstance(facts["commits"], bool):
        metadata["commits"] = facts["commits"]
    files = facts.get("files")
    paths = _touched([{"modified": files}]) if isinstance(files, list) else []
    messages = facts.get("commitMessages")
    commits = (
        [m for m in messages if isinstance(m, str) and m.strip()][:MAX_IMPORTED_COMMITS]
        if isinstance(messages, list)
        else []
    )
    names = facts.get("definitions")
    defined = (
        [n.strip() for n in names if isinstance(n, str) and _NAME.fullmatch(n.strip())][:MAX_IMPORTED_DEFINITIONS]
        if isinstance(names, list)
        else []
    )
    text = _imported_text(commits, defined, paths[:MAX_IMPORTED_FILES], _later_names(payload))
    if text:
        metadata[IMPORTED_TEXT] = text
    return metadata, paths


def _imported_text(commits: list[str], defined: list[str], paths: list[str], later: dict[str, str]) -> str:
    """What it did, as its content says it: the commits, the code changed and the paths. Metadata
    holds it too, and has a size limit: when it would not fit, what says least goes first (the
    commits' bodies, then the names of the code), then lines from the end."""
    code = f"{DEFINITIONS_LINE}{', '.join(defined)}" if defined else ""
    where = f"{PATHS_LINE}{_listed(paths, later)}" if paths else ""

    def joined(lines: list[str], code: str) -> str:
        listed = "Commits:\n" + "\n".join(lines) if lines else ""
        return "\n".join(part for part in (listed, code, where) if part).strip()

    text = joined([_commit_line(m) for m in commits], code)
    if _fits(text):
        return text
    subjects = [_commit_line(m, body=False) for m in commits]
    for text in (joined(subjects, code), joined(subjects, "")):
        if _fits(text):
            return text
    kept = text.split("\n")
    while kept and not _fits("\n".join(kept)):
        kept.pop()
    return "\n".join(kept)


def _fits(text: str) -> bool:
    """Whether ``text`` fits the imported text's share of metadata, as JSON."""
    return len(json.dumps(text)) <= MAX_IMPORTED_TEXT


# What a commit message carries beyond its words: sign-offs and co-authors, Subversion's and
# Mercurial's conversion notes, a cherry-pick's origin.
_TRAILER = re.compile(
    r"^(?:[\w-]+-by:|change-id:|git-svn-id:|\(cherry picked from |--hg--$|(?:branch|rename|extra)\s*:)", re.IGNORECASE
)


def _commit_line(message: str, *, body: bool = True) -> str:
    """A commit as the pull request's content lists it: ``- subject``, then (with ``body``) what
    its body says (trailers dropped, whitespace collapsed, at most ``MAX_COMMIT_BODY`` characters)."""
    subject, _, rest = message.strip().partition("\n")
    said = " ".join(
        " ".join(line.split()) for line in rest.splitlines() if line.strip() and not _TRAILER.match(line.strip())
    )
    return f"- {first_line(subject)}" + (f"\n  {said[:MAX_COMMIT_BODY].rstrip()}" if said and body else "")


def _merged_with_sha(pr: dict[str, Any]) -> bool:
    """Whether the pull request was merged and names the commit it was merged as."""
    return bool(pr.get("merged")) and isinstance(pr.get("merge_commit_sha"), str) and bool(pr["merge_commit_sha"])


def _issue(payload: dict[str, Any], event_time: str | None) -> Normalized:
    repo = _repo(payload)
    action, issue = payload.get("action"), payload.get("issue")
    if not isinstance(issue, dict):
        raise MalformedEvent("GitHub issues payload has no issue object")
    if action not in ("opened", "closed"):
        return Normalized(skipped=Skipped(f"issues action {action!r} is not observed"))
    observation_type = f"issue_{action}"
    login, is_bot = _actor(issue, "user")
    number = issue.get("number")
    observation = ObservationIn.model_validate(
        {
            "id": f"github-issue-{repo.replace('/', '.')}-{number}-{action}",
            "source": "github",
            "sourceType": "issue",
            "observationType": observation_type,
            "actorName": login if action == "opened" else _actor(payload)[0],
            "occurredAt": (issue.get("created_at") if action == "opened" else issue.get("closed_at")) or event_time,
            "title": f"Issue #{number} {action}: {first_line(issue.get('title'), field='issue.title')}",
            "content": str(issue.get("body") or ""),
            "url": issue.get("html_url"),
            "metadata": {
                "repo": repo,
                "number": number,
                "state_reason": issue.get("state_reason"),
                "bot": is_bot,
                ASSOCIATION: _association(issue),
            },
        }
    )
    return Normalized(observations=[observation])


def _issue_comment(payload: dict[str, Any], event_time: str | None) -> Normalized:
    repo = _repo(payload)
    action, comment, issue = payload.get("action"), payload.get("comment"), payload.get("issue")
    if not isinstance(comment, dict) or not isinstance(issue, dict):
        raise MalformedEvent("GitHub issue_comment payload has no comment or issue object")
    if action != "created":
        return Normalized(skipped=Skipped(f"issue_comment action {action!r} is not observed"))
    login, is_bot = _actor(comment, "user")
    if is_bot:
        return Normalized(skipped=Skipped(f"comment by bot {login} on {repo}#{issue.get('number')}"))
    observation = ObservationIn.model_validate(
        {
            "id": f"github-comment-{repo.replace('/', '.')}-{comment.get('id')}",
            "source": "github",
            "sourceType": "issue_comment",
            "observationType": "issue_comment",
            "actorName": login,
            "occurredAt": comment.get("created_at") or event_time,
            "title": f"Comment on #{issue.get('number')}: {first_line(issue.get('title'), field='issue.title')}",
            "content": str(comment.get("body") or ""),
            "url": comment.get("html_url"),
            "metadata": {
                "repo": repo,
                "number": issue.get("number"),
                "pull_request": "pull_request" in issue,
                ASSOCIATION: _association(comment),
            },
        }
    )
    return Normalized(observations=[observation])


def _release(payload: dict[str, Any], event_time: str | None) -> Normalized:
    repo = _repo(payload)
    action, release = payload.get("action"), payload.get("release")
    if not isinstance(release, dict):
        raise MalformedEvent("GitHub release payload has no release object")
    if action != "published":
        return Normalized(skipped=Skipped(f"release action {action!r} is not observed"))
    tag = release.get("tag_name")
    observation = ObservationIn.model_validate(
        {
            "id": f"github-release-{repo.replace('/', '.')}-{release.get('id')}",
            "source": "github",
            "sourceType": "release",
            "observationType": "release",
            "actorName": _actor(release, "author")[0],
            "occurredAt": release.get("published_at") or event_time,
            "title": f"Release {tag}: {first_line(release.get('name'), field='release.name') or tag}",
            "content": str(release.get("body") or ""),
            "url": release.get("html_url"),
            "metadata": {
                "repo": repo,
                "tag": tag,
                "prerelease": bool(release.get("prerelease")),
                ASSOCIATION: COMMITTER,  # only people with push access publish a release
            },
        }
    )
    return Normalized(observations=[observation])
