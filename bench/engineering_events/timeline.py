"""The normalizers' own inputs, written along a timeline: EventBridge envelopes around GitHub
webhook payloads (push, pull_request, issues, issue_comment, release), Vercel deployment webhook
bodies and our own clients' ``neural-memory.<workspace>`` events (notes, decisions, ADRs, conversation turns),
each shaped like the samples in ``events/eventbridge``.

Every method returns the observation id the normalizer will give the event (ids are the
normalizers' rule, so labels can name them before anything is indexed); ``Timeline.query``
records a labelled question. Shas, deployment ids and minutes come from a seeded ``random.Random``
and from hashes of the event's text: the same script always writes the same bytes.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from neural_memory.domain.ids import source_id

Tier = Literal["A", "C", "E"]
ORG = "harborlabs"
AGENT_SOURCE = f"neural-memory.{ORG}"  # an agent's source names its workspace (README, "Agents on the bus")
ACCOUNT = "123456789012"
TEAM_ID = "team_hb7Qx2Lm9Vw4Rt1K"
_NAMESPACE = uuid.UUID("6f1d2c3b-26e5-4e1a-9d0c-000000000026")  # event ids: uuid5 under this

#: Vercel projects: a repository that deploys on every push (production from main, preview from a branch).
VERCEL_PROJECTS = {f"{ORG}/tidewater-web": "tidewater-web", f"{ORG}/tidewater-docs": "tidewater-docs"}


def _hex(*parts: object, length: int = 40) -> str:
    return hashlib.sha1("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:length]


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _user(login: str) -> dict[str, Any]:
    bot = login.endswith("[bot]")
    return {"login": login, "id": int(_hex(login, length=8), 16) % 90_000_000, "type": "Bot" if bot else "User"}


def _repository(repo: str) -> dict[str, Any]:
    owner, name = repo.split("/")
    return {
        "id": int(_hex(repo, length=8), 16) % 900_000_000,
        "name": name,
        "full_name": repo,
        "private": True,
        "html_url": f"https://github.com/{repo}",
        "default_branch": "main",
        "owner": {"login": owner, "id": 91_234_560, "type": "Organization"},
    }


@dataclass
class Commit:
    """A commit that reached GitHub in a push."""

    sha: str
    message: str
    author: str
    branch: str
    repo: str


@dataclass
class Thread:
    """An issue or a pull request: its number, title and the ids of what it yielded."""

    repo: str
    number: int
    title: str
    body: str
    author: str
    head: str | None = None  # a pull request's branch
    created: datetime | None = None
    ids: dict[str, str] = field(default_factory=dict)  # "opened", "merged", "closed"


@dataclass
class Deployment:
    """A Vercel deployment: the id of its ``deployment.created`` and of its outcome."""

    created_id: str
    outcome_id: str


@dataclass
class Query:
    """A labelled question: the tier it targets and the ids that answer it."""

    id: str
    text: str
    tier: Tier
    relevant: list[str]


class Timeline:
    """Events in the order they happened, and the questions asked of them."""

    def __init__(self, start: datetime, seed: int, numbering: list[int] | None = None) -> None:
        """``numbering``: the number of each issue or pull request in the order the script opens
        them (``chronological_numbers`` of a first run), so numbers grow with time as on GitHub."""
        self.start = start
        self.numbering = numbering
        self.opened: list[tuple[str, datetime]] = []  # (repository, when) of each issue or pull request
        self.random = random.Random(seed)
        self.events: list[tuple[datetime, dict[str, Any]]] = []
        self.queries: list[Query] = []
        self._comment_id = 2_600_000_000
        self._turns: dict[str, int] = {}
        self._last_deployment: Deployment | None = None

    def at(self, week: int, day: int, clock: str) -> datetime:
        """A moment: ``day`` 0 is the Monday of ``week`` (0-based), ``clock`` is ``HH:MM`` UTC."""
        hours, minutes = (int(part) for part in clock.split(":"))
        return self.start + timedelta(weeks=week, days=day, hours=hours, minutes=minutes)

    def _emit(self, source: str, detail_type: str, when: datetime, detail: dict[str, Any]) -> None:
        envelope = {
            "version": "0",
            "id": str(uuid.uuid5(_NAMESPACE, f"{len(self.events)}:{source}:{detail_type}:{_iso(when)}")),
            "detail-type": detail_type,
            "source": source,
            "account": ACCOUNT,
            "time": _iso(when + timedelta(seconds=self.random.randint(1, 9))),
            "region": "us-east-1",
            "resources": [],
            "detail": detail,
        }
        self.events.append((when, envelope))

    def _number(self, repo: str, when: datetime) -> int:
        self.opened.append((repo, when))
        return self.numbering[len(self.opened) - 1] if self.numbering else len(self.opened)

    def chronological_numbers(self) -> list[int]:
        """Numbers for the issues and pull requests this run opened: one sequence per repository
        (shared by issues and pull requests, as on GitHub), in the order they were opened."""
        numbers = [0] * len(self.opened)
        last: dict[str, int] = {}
        for index in sorted(range(len(self.opened)), key=lambda i: (self.opened[i][1], i)):
            repo = self.opened[index][0]
            last[repo] = last.get(repo, 40 if "api" in repo else 20) + 1
            numbers[index] = last[repo]
        return numbers

    # --- GitHub -----------------------------------------------------------------------------

    def push(
        self,
        repo: str,
        branch: str,
        messages: list[str],
        author: str,
        when: datetime,
        *,
        pusher: str | None = None,
        forced: bool = False,
        deploy: str | None = "succeeded",
    ) -> str:
        """A push of ``messages`` (one commit each, the last one the head) to ``branch``; a Vercel
        project deploys it (``deploy`` is the outcome, None for no deployment)."""
        before = _hex(repo, branch, "before", when)
        commits: list[tuple[Commit, datetime]] = []
        for n, message in enumerate(messages):  # committed a few minutes apart, the head at ``when``
            moment = when - timedelta(minutes=7 * (len(messages) - 1 - n))
            commits.append((Commit(_hex(repo, branch, message, moment), message, author, branch, repo), moment))
        head = commits[-1][0]
        who = pusher or author

        def commit_json(commit: Commit, at: datetime) -> dict[str, Any]:
            person = {"name": commit.author, "email": f"{commit.author}@harborlabs.dev", "username": commit.author}
            return {
                "id": commit.sha,
                "tree_id": _hex("tree", commit.sha),
                "distinct": True,
                "message": commit.message,
                "timestamp": _iso(at),
                "url": f"https://github.com/{repo}/commit/{commit.sha}",
                "author": person,
                "committer": person,
                "added": [],
                "removed": [],
                "modified": [],
            }

        detail = {
            "ref": f"refs/heads/{branch}",
            "before": before,
            "after": head.sha,
            "created": False,
            "deleted": False,
            "forced": forced,
            "base_ref": None,
            "compare": f"https://github.com/{repo}/compare/{before[:12]}...{head.sha[:12]}",
            "commits": [commit_json(c, at) for c, at in commits],
            "head_commit": commit_json(head, when),
            "repository": _repository(repo),
            "pusher": {"name": who, "email": f"{who}@harborlabs.dev"},
            "sender": _user(who),
        }
        self._emit("github", "push", when, detail)
        observation = f"github-push-{repo.replace('/', '.')}-{head.sha[:12]}"
        if deploy and repo in VERCEL_PROJECTS:
            self.deployment(repo, head, when + timedelta(seconds=40), deploy)
        return observation

    def delete_branch(self, repo: str, branch: str, who: str, when: datetime) -> None:
        """A branch deletion after a merge (GitHub sends a push; the normalizer skips it)."""
        detail = {
            "ref": f"refs/heads/{branch}",
            "before": _hex(repo, branch, "deleted-head"),
            "after": "0" * 40,
            "created": False,
            "deleted": True,
            "forced": False,
            "commits": [],
            "head_commit": None,
            "repository": _repository(repo),
            "pusher": {"name": who, "email": f"{who}@harborlabs.dev"},
            "sender": _user(who),
        }
        self._emit("github", "push", when, detail)

    def _pull_request_json(self, pr: Thread, state: str, **times: datetime | None) -> dict[str, Any]:
        url = f"https://github.com/{pr.repo}/pull/{pr.number}"
        return {
            "url": f"https://api.github.com/repos/{pr.repo}/pulls/{pr.number}",
            "id": 2_100_000_000 + pr.number * 7 + len(pr.repo),
            "html_url": url,
            "number": pr.number,
            "state": state,
            "locked": False,
            "title": pr.title,
            "user": _user(pr.author),
            "body": pr.body,
            "created_at": _iso(pr.created) if pr.created else None,
            "updated_at": None,
            "closed_at": None,
            "merged_at": None,
            "merged": False,
            "head": {"ref": pr.head, "sha": _hex(pr.repo, pr.head, "head")},
            "base": {"ref": "main", "sha": _hex(pr.repo, "main", pr.number)},
            **{key: _iso(value) if value else None for key, value in times.items()},
        }

    def pr_opened(self, repo: str, title: str, body: str, author: str, when: datetime, head: str) -> Thread:
        """``pull_request`` ``opened``."""
        pr = Thread(repo, self._number(repo, when), title, body, author, head=head, created=when)
        detail = {
            "action": "opened",
            "number": pr.number,
            "pull_request": self._pull_request_json(pr, "open", updated_at=when),
            "repository": _repository(repo),
            "sender": _user(author),
        }
        self._emit("github", "pull_request", when, detail)
        pr.ids["opened"] = f"github-pr-{repo.replace('/', '.')}-{pr.number}-pull_request_opened"
        return pr

    def pr_merged(self, pr: Thread, merger: str, when: datetime, *, deploy: str | None = "succeeded") -> str:
        """``pull_request`` ``closed`` with ``merged``; the squash commit is pushed to main (and deployed)."""
        pull = self._pull_request_json(pr, "closed", updated_at=when, closed_at=when, merged_at=when)
        pull |= {"merged": True, "merged_by": _user(merger), "merge_commit_sha": _hex(pr.repo, pr.number, "merge")}
        detail = {
            "action": "closed",
            "number": pr.number,
            "pull_request": pull,
            "repository": _repository(pr.repo),
            "sender": _user(merger),
        }
        self._emit("github", "pull_request", when, detail)
        pr.ids["merged"] = f"github-pr-{pr.repo.replace('/', '.')}-{pr.number}-pull_request_merged"
        squash = f"{pr.title} (#{pr.number})"
        pr.ids["push"] = self.push(
            pr.repo, "main", [squash], pr.author, when + timedelta(seconds=5), pusher=merger, deploy=deploy
        )
        if pr.head:
            self.delete_branch(pr.repo, pr.head, merger, when + timedelta(seconds=30))
        return pr.ids["merged"]

    def pr_closed(self, pr: Thread, closer: str, when: datetime) -> str:
        """``pull_request`` ``closed`` without merging."""
        detail = {
            "action": "closed",
            "number": pr.number,
            "pull_request": self._pull_request_json(pr, "closed", updated_at=when, closed_at=when),
            "repository": _repository(pr.repo),
            "sender": _user(closer),
        }
        self._emit("github", "pull_request", when, detail)
        pr.ids["closed"] = f"github-pr-{pr.repo.replace('/', '.')}-{pr.number}-pull_request_closed"
        return pr.ids["closed"]

    def _issue_json(self, issue: Thread, state: str, closed: datetime | None, reason: str | None) -> dict[str, Any]:
        return {
            "url": f"https://api.github.com/repos/{issue.repo}/issues/{issue.number}",
            "html_url": f"https://github.com/{issue.repo}/issues/{issue.number}",
            "id": 2_200_000_000 + issue.number * 11 + len(issue.repo),
            "number": issue.number,
            "title": issue.title,
            "user": _user(issue.author),
            "state": state,
            "body": issue.body,
            "created_at": _iso(issue.created) if issue.created else None,
            "updated_at": _iso(updated) if (updated := closed or issue.created) else None,
            "closed_at": _iso(closed) if closed else None,
            "state_reason": reason,
            "labels": [],
        }

    def issue_opened(self, repo: str, title: str, body: str, author: str, when: datetime) -> Thread:
        """``issues`` ``opened``."""
        issue = Thread(repo, self._number(repo, when), title, body, author, created=when)
        detail = {
            "action": "opened",
            "issue": self._issue_json(issue, "open", None, None),
            "repository": _repository(repo),
            "sender": _user(author),
        }
        self._emit("github", "issues", when, detail)
        issue.ids["opened"] = f"github-issue-{repo.replace('/', '.')}-{issue.number}-opened"
        return issue

    def issue_closed(self, issue: Thread, closer: str, when: datetime, reason: str = "completed") -> str:
        """``issues`` ``closed``."""
        detail = {
            "action": "closed",
            "issue": self._issue_json(issue, "closed", when, reason),
            "repository": _repository(issue.repo),
            "sender": _user(closer),
        }
        self._emit("github", "issues", when, detail)
        issue.ids["closed"] = f"github-issue-{issue.repo.replace('/', '.')}-{issue.number}-closed"
        return issue.ids["closed"]

    def comment(self, thread: Thread, author: str, body: str, when: datetime) -> str | None:
        """``issue_comment`` ``created`` on an issue or a pull request (a bot's is skipped: None)."""
        self._comment_id += self.random.randint(3, 4000)
        issue = self._issue_json(thread, "open", None, None)
        if thread.head is not None:
            issue["pull_request"] = {"url": f"https://api.github.com/repos/{thread.repo}/pulls/{thread.number}"}
        detail = {
            "action": "created",
            "issue": issue,
            "comment": {
                "id": self._comment_id,
                "html_url": f"{issue['html_url']}#issuecomment-{self._comment_id}",
                "user": _user(author),
                "created_at": _iso(when),
                "updated_at": _iso(when),
                "body": body,
            },
            "repository": _repository(thread.repo),
            "sender": _user(author),
        }
        self._emit("github", "issue_comment", when, detail)
        if author.endswith("[bot]"):
            return None
        return f"github-comment-{thread.repo.replace('/', '.')}-{self._comment_id}"

    def release(self, repo: str, tag: str, name: str, body: str, author: str, when: datetime) -> str:
        """``release`` ``published``."""
        release_id = 180_000_000 + int(_hex(repo, tag, length=6), 16) % 9_000_000
        detail = {
            "action": "published",
            "release": {
                "id": release_id,
                "tag_name": tag,
                "name": name,
                "body": body,
                "draft": False,
                "prerelease": False,
                "created_at": _iso(when - timedelta(minutes=3)),
                "published_at": _iso(when),
                "html_url": f"https://github.com/{repo}/releases/tag/{tag}",
                "author": _user(author),
            },
            "repository": _repository(repo),
            "sender": _user(author),
        }
        self._emit("github", "release", when, detail)
        return f"github-release-{repo.replace('/', '.')}-{release_id}"

    # --- Vercel -----------------------------------------------------------------------------

    def deployment(self, repo: str, commit: Commit, when: datetime, outcome: str) -> Deployment:
        """``deployment.created`` then ``deployment.<outcome>`` a few minutes later."""
        project = VERCEL_PROJECTS[repo]
        target = "production" if commit.branch == "main" else "preview"
        deployment_id = "dpl_" + _hex(project, commit.sha, length=24)
        host = f"{project}-{commit.sha[:9]}-{ORG}.vercel.app"
        meta = {
            "githubCommitSha": commit.sha,
            "githubCommitMessage": commit.message,
            "githubCommitRef": commit.branch,
            "githubCommitAuthorLogin": commit.author,
            "githubCommitAuthorName": commit.author,
            "githubOrg": ORG,
            "githubRepo": repo.split("/")[1],
        }
        ids = []
        for kind, moment in (("created", when), (outcome, when + timedelta(seconds=self.random.randint(70, 260)))):
            webhook_id = _hex(deployment_id, kind, length=20)
            body = {
                "id": webhook_id,
                "type": f"deployment.{kind}",
                "createdAt": int(moment.timestamp() * 1000),
                "region": "iad1",
                "payload": {
                    "team": {"id": TEAM_ID},
                    "user": {"id": _hex("vercel-user", commit.author, length=20)},
                    "deployment": {
                        "id": deployment_id,
                        "name": project,
                        "url": host,
                        "inspectorUrl": f"https://vercel.com/{ORG}/{project}/{deployment_id[4:]}",
                        "meta": meta,
                    },
                    "links": {
                        "deployment": f"https://vercel.com/{ORG}/{project}/{deployment_id[4:]}",
                        "project": f"https://vercel.com/{ORG}/{project}",
                    },
                    "name": project,
                    "plan": "pro",
                    "project": {"id": "prj_" + _hex(project, length=24)},
                    "target": target if target == "production" else None,
                    "type": "LAMBDAS",
                    "regions": ["iad1"],
                },
            }
            self._emit("vercel", f"deployment.{kind}", moment, body)
            ids.append(source_id("vercel", f"{deployment_id}-{kind}"))  # named by deployment and state
        self._last_deployment = Deployment(created_id=ids[0], outcome_id=ids[1])
        return self._last_deployment

    def last_deployment(self) -> Deployment:
        """The deployment of the latest deployed push (a push's id names the push, not its deployment)."""
        if self._last_deployment is None:
            raise ValueError("nothing was deployed yet")
        return self._last_deployment

    # --- our own clients (source neural-memory.harborlabs) ---------------------------------------------

    def note(
        self,
        kind: str,
        observation_id: str,
        title: str,
        content: str,
        author: str,
        when: datetime,
        *,
        supersedes: list[str] | None = None,
        repo: str | None = None,
    ) -> str:
        """A ``note``, ``decision``, ``adr`` or ``design_note`` an engineer or agent saved."""
        detail: dict[str, Any] = {
            "workspace": "harborlabs",
            "id": observation_id,
            "title": title,
            "content": content,
            "actorName": author,
        }
        if supersedes:
            detail["supersedes"] = supersedes
        if repo:
            detail["metadata"] = {"repo": repo}
        self._emit(AGENT_SOURCE, kind, when, detail)
        return observation_id

    def turn(self, session: str, actor: str, content: str, when: datetime) -> str:
        """A ``conversation_turn`` of an agent session (no title: the memory derives one)."""
        self._turns[session] = self._turns.get(session, 0) + 1
        observation_id = f"turn-{session}-{self._turns[session]}"
        detail = {
            "workspace": "harborlabs",
            "id": observation_id,
            "content": content,
            "actorName": actor,
            "sessionId": session,
            "occurredAt": _iso(when),
        }
        self._emit(AGENT_SOURCE, "conversation_turn", when, detail)
        return observation_id

    # --- labels -----------------------------------------------------------------------------

    def query(self, text: str, tier: Tier, *relevant: str | None) -> None:
        """A question and the ids of the observations that answer it (all of the ``tier`` asked)."""
        ids = [r for r in relevant if r is not None]
        if not ids:
            raise ValueError(f"query without relevant ids: {text!r}")
        self.queries.append(Query(f"q{len(self.queries) + 1:03d}", text, tier, ids))
