"""Real HTTP servers on loopback speaking GitHub's and Vercel's REST APIs as the importers read
them: GitHub's lists paged by ``page``/``per_page`` with a ``Link: <…>; rel="next"`` header (and
``since`` where GitHub takes it), Vercel's ``/v6/deployments`` paged by ``until`` and
``pagination.next``. Pages are smaller than the importers ask for (a server may cap them), so a
small data set spans several pages.

Faults are scripted per request path (``fail``): a 403 with ``X-RateLimit-Remaining: 0`` and a
reset a second ahead, a 429 with ``Retry-After``, a 502, a page that is not JSON, a 401. Each
request is recorded (``requests``), so a test can see what was asked, when.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.helpers.events import load_event

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

PAGE_CAP = 2  # items per page, whatever the client asks: several pages from a few items
REPO = "acme/console"
TEAM = "team_3Qp9kZ2mW8xV1nB4"
PROJECT = "prj_Zt4Yx6Wv8Us0Tr2Qp4On6Ml8"


@dataclass
class Request:
    path: str
    query: dict[str, str]
    at: float  # time.time(), to compare with a rate limit's reset
    authorization: str | None


@dataclass
class Reply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


def rate_limited() -> Reply:
    """GitHub's primary rate limit spent: 403, nothing remaining, reset a second ahead."""
    reset = int(time.time()) + 1
    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset), "X-RateLimit-Limit": "5000"}
    return Reply(403, b'{"message": "API rate limit exceeded"}', headers)


def retry_after() -> Reply:
    return Reply(429, b'{"message": "You have exceeded a secondary rate limit"}', {"Retry-After": "1"})


def bad_gateway() -> Reply:
    return Reply(502, b"<html>502 Bad Gateway</html>", {"Content-Type": "text/html"})


def not_json() -> Reply:
    return Reply(200, b"<html>Unicorn! This page is taking too long</html>", {"Content-Type": "text/html"})


def unauthorized() -> Reply:
    return Reply(401, b'{"message": "Bad credentials"}')


class StandIn:
    """One API on an ephemeral loopback port: ``route`` answers a path and its query."""

    def __init__(self, route: Callable[[str, dict[str, str]], Reply]) -> None:
        self.route = route
        self.requests: list[Request] = []
        self.faults: dict[str, list[Callable[[], Reply]]] = {}
        self.url = ""

    def fail(self, path: str, *faults: Callable[[], Reply]) -> None:
        """The next requests for ``path`` (any query) get these replies, in order."""
        self.faults.setdefault(path, []).extend(faults)

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        self.requests.append(Request(parts.path, query, time.time(), handler.headers.get("Authorization")))
        pending = self.faults.get(parts.path)
        reply = pending.pop(0)() if pending else self.route(parts.path, query)
        handler.send_response(reply.status)
        headers = {"Content-Type": "application/json", **reply.headers}
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(reply.body)))
        handler.end_headers()
        handler.wfile.write(reply.body)

    def asked(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]


@contextmanager
def serving(stand_in: StandIn) -> Iterator[StandIn]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            stand_in.answer(self)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    stand_in.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stand_in
    finally:
        server.shutdown()
        server.server_close()


def _json(value: Any) -> Reply:
    return Reply(200, json.dumps(value).encode())


# -- GitHub ------------------------------------------------------------------------------------


def _user(login: str, kind: str = "User") -> dict[str, Any]:
    return {"login": login, "id": abs(hash(login)) % 10_000_000, "type": kind}


def _pull(number: int, title: str, updated: str, merged: bool, author: str = "hubot") -> dict[str, Any]:
    return {
        "url": f"https://api.github.com/repos/{REPO}/pulls/{number}",
        "html_url": f"https://github.com/{REPO}/pull/{number}",
        "number": number,
        "state": "closed",
        "title": title,
        "user": _user(author),
        "body": f"{title}. Details of #{number}.",
        "created_at": "2025-11-01T09:00:00Z",
        "updated_at": updated,
        "closed_at": updated,
        "merged_at": updated if merged else None,
        "merge_commit_sha": f"{number:040x}",
        "head": {"ref": f"branch-{number}", "sha": "0" * 40},
        "base": {"ref": "main", "sha": "1" * 40},
    }


class GitHubData:
    """A repository's history: closed pull requests (one is the sample webhook's #482), issues,
    comments (one by a bot) and releases (one a draft)."""

    def __init__(self) -> None:
        sample = load_event("eventbridge/github_pull_request")["detail"]["pull_request"]
        merged_482 = {k: v for k, v in sample.items() if k not in ("merged", "merged_by", "additions", "deletions")}
        self.pulls = [
            _pull(470, "Add a health endpoint", "2025-11-20T10:00:00Z", merged=True),
            _pull(471, "Try a new router (abandoned)", "2025-11-21T10:00:00Z", merged=False, author="mona"),
            _pull(475, "Cache the session lookup", "2025-11-25T10:00:00Z", merged=True, author="mona"),
            merged_482,  # updated 2025-12-11
            _pull(490, "Bump next to 15.1", "2025-12-13T10:00:00Z", merged=True, author="dependabot[bot]"),
        ]
        self.merged_by = {470: "octocat", 475: "octocat", 482: "octocat", 490: "mona"}
        renamed = {"status": "renamed", "previous_filename": "src/hooks/useSessionRefresh.ts"}
        self.files: dict[int, list[dict[str, Any]]] = {
            482: [
                {"filename": "src/middleware.ts", "status": "modified"},
                {"filename": "src/auth/refresh.ts", "status": "added"},
                {"filename": "src/hooks/useSession.ts", **renamed},
            ],
        }
        reviews = [{"user": _user("mona"), "state": "APPROVED"}, {"user": _user("hubot"), "state": "COMMENTED"}]
        self.reviews: dict[int, list[dict[str, Any]]] = {482: reviews}
        self.issues = [
            self._issue(12, "Login loops after token expiry", "2025-11-22T08:00:00Z", closed=True),
            self._issue(13, "Dark mode flickers", "2025-11-28T08:00:00Z", closed=False),
            self._issue(14, "Session cookie not secure on preview", "2025-12-12T08:00:00Z", closed=True),
        ]
        self.comments = [
            self._comment(9001, 12, "mona", "Safari: the refresh races the redirect.", "2025-11-22T09:00:00Z"),
            self._comment(9002, 482, "octocat", "Let's ship this behind the edge flag first.", "2025-12-11T12:00:00Z"),
            self._comment(9003, 482, "vercel[bot]", "Preview deployed.", "2025-12-11T12:30:00Z", bot=True),
        ]  # fmt: skip
        self.releases = [
            self._release(3, "v1.3.0", None),  # a draft: not published
            self._release(2, "v1.2.0", "2025-12-12T15:00:00Z"),
            self._release(1, "v1.1.0", "2025-11-30T15:00:00Z"),
        ]

    @staticmethod
    def _issue(number: int, title: str, updated: str, closed: bool) -> dict[str, Any]:
        return {
            "number": number,
            "title": title,
            "body": f"{title}: steps to reproduce.",
            "user": _user("mona"),
            "state": "closed" if closed else "open",
            "state_reason": "completed" if closed else None,
            "html_url": f"https://github.com/{REPO}/issues/{number}",
            "created_at": "2025-11-15T08:00:00Z",
            "updated_at": updated,
            "closed_at": updated if closed else None,
        }

    @staticmethod
    def _comment(id_: int, number: int, login: str, body: str, at: str, bot: bool = False) -> dict[str, Any]:
        return {
            "id": id_,
            "body": body,
            "user": _user(login, "Bot" if bot else "User"),
            "html_url": f"https://github.com/{REPO}/issues/{number}#issuecomment-{id_}",
            "issue_url": f"https://api.github.com/repos/{REPO}/issues/{number}",
            "created_at": at,
            "updated_at": at,
        }

    @staticmethod
    def _release(id_: int, tag: str, published: str | None) -> dict[str, Any]:
        return {
            "id": id_,
            "tag_name": tag,
            "name": f"Console {tag}",
            "body": f"What changed in {tag}.",
            "draft": published is None,
            "prerelease": False,
            "author": _user("octocat"),
            "html_url": f"https://github.com/{REPO}/releases/tag/{tag}",
            "published_at": published,
        }

    def issue_list(self) -> list[dict[str, Any]]:
        """``/issues`` lists pull requests too, marked by ``pull_request``, all by ``updated_at``."""
        as_issues = [
            {"number": p["number"], "title": p["title"], "user": p["user"], "state": "closed",
             "created_at": p["created_at"], "updated_at": p["updated_at"], "closed_at": p["closed_at"],
             "pull_request": {"url": p["url"], "merged_at": p["merged_at"]}}
            for p in self.pulls
        ]  # fmt: skip
        return sorted(self.issues + as_issues, key=lambda i: str(i["updated_at"]))

    def route(self, base: Callable[[], str]) -> Callable[[str, dict[str, str]], Reply]:
        prefix = f"/repos/{REPO}"

        def answer(path: str, query: dict[str, str]) -> Reply:
            if path == prefix:
                return _json({"id": 812345678, "full_name": REPO, "private": True})
            rest = path.removeprefix(prefix)
            if rest == "/pulls":
                assert query.get("state") == "closed" and query.get("sort") == "updated", query
                return _paged(base(), path, query, sorted(self.pulls, key=lambda p: str(p["updated_at"])))
            if match := re.fullmatch(r"/pulls/(\d+)", rest):
                pull = next(copy.deepcopy(p) for p in self.pulls if p["number"] == int(match.group(1)))
                pull.update(merged=pull["merged_at"] is not None, commits=3, comments=1)
                login = self.merged_by.get(pull["number"])
                pull["merged_by"] = _user(login) if login and pull["merged"] else None
                return _json(pull)
            if match := re.fullmatch(r"/pulls/(\d+)/(files|reviews)", rest):
                table = self.files if match.group(2) == "files" else self.reviews
                return _paged(base(), path, query, table.get(int(match.group(1)), []))
            if rest == "/issues":
                return _paged(base(), path, query, _since(self.issue_list(), query))
            if match := re.fullmatch(r"/issues/(\d+)", rest):
                return _json(next(i for i in self.issue_list() if i["number"] == int(match.group(1))))
            if rest == "/issues/comments":
                return _paged(base(), path, query, _since(self.comments, query))
            if rest == "/releases":
                return _paged(base(), path, query, self.releases)
            return Reply(404, b'{"message": "Not Found"}')

        return answer


def _since(items: list[dict[str, Any]], query: dict[str, str]) -> list[dict[str, Any]]:
    since = query.get("since")
    return [i for i in items if since is None or str(i["updated_at"]) >= since]


def _paged(base: str, path: str, query: dict[str, str], items: list[dict[str, Any]]) -> Reply:
    """One page of ``items``, with GitHub's ``Link`` header naming the next (and last) one."""
    size = min(int(query.get("per_page", 30)), PAGE_CAP)
    page = int(query.get("page", 1))
    chunk = items[(page - 1) * size : page * size]
    headers = {}
    last = max(1, -(-len(items) // size))

    def link(number: int) -> str:
        return f"{base}{path}?{urlencode({**query, 'page': number})}"

    if page < last:
        headers["Link"] = f'<{link(page + 1)}>; rel="next", <{link(last)}>; rel="last"'
    return Reply(200, json.dumps(chunk).encode(), headers)


def github_stand_in(data: GitHubData | None = None) -> StandIn:
    stand_in = StandIn(lambda path, query: Reply(503, b"{}"))
    stand_in.route = (data or GitHubData()).route(lambda: stand_in.url)  # its links name its own address
    return stand_in


# -- Vercel ------------------------------------------------------------------------------------


def _deployment(uid: str, created: int, state: str, message: str, sha: str, target: str | None) -> dict[str, Any]:
    short = uid.removeprefix("dpl_")
    return {
        "uid": uid,
        "name": "console",
        "url": f"console-{sha[:8]}-acme.vercel.app",
        "created": created,
        "createdAt": created,
        "buildingAt": created + 1_000,
        "ready": None if state in ("BUILDING", "QUEUED") else created + 60_000,
        "state": state,
        "readyState": state,
        "type": "LAMBDAS",
        "source": "git",
        "target": target,
        "projectId": PROJECT,
        "inspectorUrl": f"https://vercel.com/acme/console/{short}",
        "creator": {"uid": "2XbC7dE9fG1hJ3kL5mN7", "username": "octocat"},
        "meta": {
            "githubCommitSha": sha,
            "githubCommitMessage": message,
            "githubCommitRef": "main",
            "githubCommitAuthorLogin": "octocat",
            "githubCommitAuthorName": "Mona Octocat",
            "githubOrg": "acme",
            "githubRepo": "console",
        },
    }


class VercelData:
    """A project's deployments, newest first; one is the sample ``deployment.succeeded`` webhook's."""

    def __init__(self) -> None:
        sample = load_event("eventbridge/vercel_deployment_succeeded")["detail"]["payload"]["deployment"]
        day = 86_400_000
        t0 = 1_765_000_000_000
        self.deployments = [
            _deployment("dpl_Q7wE5rT3yU1iO9pA7sD5", t0 + 7 * day, "BUILDING", "Tune the cache headers", "a" * 40, None),
            # The sample webhook's deployment: READY, created a minute before its webhook.
            {**_deployment(sample["id"], 1_765_537_140_000, "READY", sample["meta"]["githubCommitMessage"],
                           sample["meta"]["githubCommitSha"], "production"), "url": sample["url"]},
            _deployment("dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx", 1_765_533_600_000, "ERROR",
                        "Fix auth redirect loop after session refresh", "7f3a9b2c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f70",
                        "production"),
            _deployment("dpl_Z1xC3vB5nM7aS9dF1gH3", t0 + 2 * day, "CANCELED", "Revert the router", "b" * 40, None),
            _deployment("dpl_P0oI9uY8tR7eW6qA5sD4", t0 + 1 * day, "DELETED", "Old preview", "c" * 40, None),
            _deployment("dpl_L1kJ2hG3fD4sA5qW6eR7", t0, "READY", "Initial console", "d" * 40, "production"),
        ]  # fmt: skip
        self.deployments.sort(key=lambda d: -int(d["created"]))

    def route(self, path: str, query: dict[str, str]) -> Reply:
        if path != "/v6/deployments":
            return Reply(404, b'{"error": {"code": "not_found", "message": "Not Found"}}')
        if query.get("projectId") not in (PROJECT, "console"):
            return _json({"deployments": [], "pagination": {"count": 0, "next": None, "prev": None}})
        until = int(query["until"]) if "until" in query else None
        listed = [d for d in self.deployments if until is None or int(d["created"]) < until]
        size = min(int(query.get("limit", 20)), PAGE_CAP + 1)
        page = listed[:size]
        following = page[-1]["created"] if len(listed) > size else None
        return _json({"deployments": page, "pagination": {"count": len(page), "next": following, "prev": None}})


def vercel_stand_in(data: VercelData | None = None) -> StandIn:
    return StandIn((data or VercelData()).route)
