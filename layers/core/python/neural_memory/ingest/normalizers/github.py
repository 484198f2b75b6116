"""GitHub webhooks delivered as EventBridge events: ``detail-type`` is the ``X-GitHub-Event``
name and ``detail`` the webhook payload."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from neural_memory.domain.chunking import PATHS_LINE
from neural_memory.ingest.normalizers.base import (
    MalformedEvent,
    Normalized,
    Skipped,
    UnsupportedEvent,
    dig,
    first_line,
)
from neural_memory.ingest.normalizers.github_import import IMPORTED_TEXT, MAX_IMPORTED_FILES, imported_facts
from neural_memory.ingest.normalizers.github_paths import later_names, listed_paths, removed_paths, touched_paths
from neural_memory.models import ObservationIn
from neural_memory.trust.team import ASSOCIATION, COMMITTER

_ZERO_SHA = "0" * 40


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
    paths = touched_paths(commits)
    if paths:  # what it touched is searched with what it says (who knows "cookie handling": cookies.py)
        content += f"\n{PATHS_LINE}{listed_paths(paths[:MAX_IMPORTED_FILES], later_names(payload))}"
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
                **({"removedPaths": removed} if (removed := removed_paths(commits)) else {}),
            },
            "codeRefs": [{"repository": repo, "paths": paths}] if paths else None,
        }
    )
    return Normalized(observations=[observation])


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
    imported, files = imported_facts(payload)
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
