"""``neural-memory import github OWNER/REPO``: a repository's history from GitHub's REST API, as
the webhooks would have delivered it.

- Closed pull requests (merged or not; ``/pulls?state=closed&sort=updated&direction=asc``) become
  ``pull_request`` ``closed`` payloads; a merged one is read whole (``/pulls/{n}``: ``merged``,
  ``merged_by``, the commit count). What the webhook does not carry goes under ``import``
  (reviewers from ``/pulls/{n}/reviews``, the merger, the commit count, the changed files from
  ``/pulls/{n}/files``), which the normalizer keeps as metadata and code refs.
- Issues (``/issues?state=all``, pull requests left out) become ``issues`` ``opened`` and, once
  closed, ``closed``; their comments (``/issues/comments``, which holds pull requests' too)
  ``issue_comment`` ``created``; published releases ``release`` ``published``.

The cursor keeps, per kind, the ``updated_at`` of the last item written (``since``): issues and
comments are asked ``since`` it; the pull request list cannot be, so its last page read is kept
too and items older than ``since`` are passed over without reading their details.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from neural_memory.local.history.cursor import Checkpoint
from neural_memory.local.history.events import bus_event
from neural_memory.local.history.rest import Page, RestSource, SourceError, say
from neural_memory.models import MAX_CODE_PATHS

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx

    Stream = Iterator[tuple[str, dict[str, Any]] | Checkpoint]

API = "https://api.github.com"
PER_PAGE = 100


class _Item(BaseModel):
    """What the import itself reads of an item; the rest of it goes to the normalizer untouched."""

    model_config = ConfigDict(extra="allow")


class Repository(_Item):
    full_name: str


class PullRequest(_Item):
    number: int
    updated_at: datetime
    merged_at: str | None = None
    closed_at: str | None = None
    user: dict[str, Any] | None = None


class Issue(_Item):
    number: int
    title: str = ""
    updated_at: datetime
    state: str = "open"
    created_at: str | None = None
    closed_at: str | None = None
    user: dict[str, Any] | None = None
    pull_request: dict[str, Any] | None = None


class Comment(_Item):
    id: int
    updated_at: datetime
    created_at: str | None = None
    issue_url: str
    user: dict[str, Any] | None = None


class Release(_Item):
    id: int
    draft: bool = False
    published_at: datetime | None = None
    author: dict[str, Any] | None = None


class Review(_Item):
    user: dict[str, Any] | None = None


class ChangedFile(_Item):
    filename: str
    previous_filename: str | None = None


def github_source(
    token: str | None, api_base: str = API, transport: httpx.BaseTransport | None = None, backoff_s: float = 0.5
) -> RestSource:
    headers = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "neural-memory-import",
    }
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return RestSource("GitHub", api_base, headers, transport=transport, backoff_s=backoff_s)


def _stamp(moment: datetime) -> str:
    """GitHub's own form of a time (``2024-05-01T12:00:00Z``), as ``since`` takes it."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _login(user: dict[str, Any] | None) -> str | None:
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else None


class GitHubImport:
    """One repository's history as bus events and checkpoints, each kind in the order GitHub
    last updated it; ``state`` is the cursor's (changed in place as the import goes)."""

    def __init__(self, api: RestSource, repo: str, state: dict[str, Any], since: str | None = None) -> None:
        self._api = api
        self._given = repo
        self.repo = repo
        self.state = state
        self._since = datetime.fromisoformat(since) if since else None
        self._issues: dict[int, dict[str, Any]] = {}  # number -> what a comment payload names of it

    def resolve(self) -> str:
        """The repository's own ``owner/name`` (as its webhooks spell it: the ids depend on it)."""
        page = self._api.get(f"/repos/{self._given}")
        self.repo = page.parse(Repository, page.data, "a repository").full_name
        return self.repo

    def events(self) -> Stream:
        yield from self._pulls()
        yield from self._issue_events()
        yield from self._comments()
        yield from self._releases()

    def _floor(self, kind: str) -> datetime | None:
        """Items of ``kind`` updated before this are done (the cursor) or not asked for (``--since``)."""
        saved = self.state.get(kind, {}).get("since")
        moments = [m for m in (datetime.fromisoformat(saved) if saved else None, self._since) if m is not None]
        return max(moments) if moments else None

    def _checkpoint(self, kind: str, **values: Any) -> Checkpoint:
        self.state[kind] = {**self.state.get(kind, {}), **values}
        return Checkpoint(self.state)

    # -- pull requests ----------------------------------------------------------------------

    def _pulls(self) -> Stream:
        floor = self._floor("pulls")
        params: dict[str, str | int] = {"state": "closed", "sort": "updated", "direction": "asc", "per_page": PER_PAGE}
        number = int(self.state.get("pulls", {}).get("page", 1))
        page = self._api.get(f"/repos/{self.repo}/pulls", {**params, "page": number})
        items = page.items(PullRequest, "pull requests")
        if number > 1 and floor is not None and (not items or items[0].updated_at > floor):
            # Pull requests updated since moved to the end and the rest moved up: this page may
            # start past ones not yet read, so read the list again from its start (cheaply: the
            # done ones are passed over without their details). In ascending order, a page that
            # starts with a done one has only done ones before it.
            say(f"{self.repo}: the pull request list moved since the last run; reading it from the start")
            number = 1
            page = self._api.get(f"/repos/{self.repo}/pulls", {**params, "page": number})
            items = page.items(PullRequest, "pull requests")
        while True:
            newest = floor
            for pull in items:
                if floor is None or pull.updated_at >= floor:
                    yield from self._pull(page, pull)
                newest = max(newest, pull.updated_at) if newest else pull.updated_at
            yield self._checkpoint("pulls", page=number, **({"since": newest.isoformat()} if newest else {}))
            if page.next_url is None:
                return
            page = self._api.get(page.next_url)
            items = page.items(PullRequest, "pull requests")
            number += 1

    def _pull(self, page: Page, pull: PullRequest) -> Stream:
        merged = pull.merged_at is not None
        body = pull.model_dump(mode="json")
        merged_by = None
        if merged:
            detail = self._api.get(f"/repos/{self.repo}/pulls/{pull.number}")
            body = detail.parse(PullRequest, detail.data, "a pull request").model_dump(mode="json")
            merged_by = _login(body.get("merged_by"))
        body["merged"] = merged
        facts: dict[str, Any] = {
            "reviewers": self._reviewers(pull.number, _login(pull.user)),
            "files": self._files(pull.number),
        }
        if merged_by:
            facts["mergedBy"] = merged_by
        if isinstance(body.get("commits"), int):
            facts["commits"] = body["commits"]
        payload = {
            "action": "closed",
            "repository": {"full_name": self.repo},
            "sender": body.get("merged_by") or pull.user or {},
            "pull_request": body,
            "import": facts,
        }
        when = pull.merged_at or pull.closed_at
        yield f"{self.repo}#{pull.number} (pull request)", bus_event("github", "pull_request", payload, when)

    def _reviewers(self, number: int, author: str | None) -> list[str]:
        logins: dict[str, None] = {}
        for page in self._pages(f"/repos/{self.repo}/pulls/{number}/reviews"):
            for review in page.items(Review, "reviews"):
                login = _login(review.user)
                if login and login != author:
                    logins[login] = None
        return list(logins)

    def _files(self, number: int) -> list[str]:
        paths: dict[str, None] = {}
        for page in self._pages(f"/repos/{self.repo}/pulls/{number}/files"):
            for changed in page.items(ChangedFile, "changed files"):
                # A rename changed both paths (as a push without rename detection names them).
                paths.update((p, None) for p in (changed.previous_filename, changed.filename) if p)
            if len(paths) >= MAX_CODE_PATHS:  # all a code ref keeps
                break
        return list(paths)[:MAX_CODE_PATHS]

    def _pages(self, url: str, params: dict[str, str | int] | None = None) -> Iterator[Page]:
        page = self._api.get(url, {"per_page": PER_PAGE, **(params or {})})
        yield page
        while page.next_url is not None:
            page = self._api.get(page.next_url)
            yield page

    # -- issues and comments ----------------------------------------------------------------

    def _updated_since(self, kind: str) -> dict[str, str | int]:
        floor = self._floor(kind)
        return {"sort": "updated", "direction": "asc", **({"since": _stamp(floor)} if floor else {})}

    def _issue_events(self) -> Stream:
        params = {"state": "all", **self._updated_since("issues")}
        for page in self._pages(f"/repos/{self.repo}/issues", params):
            items = page.items(Issue, "issues")
            for issue in items:
                self._remember(issue)
                if issue.pull_request is not None:
                    continue  # a pull request, imported as one
                body = issue.model_dump(mode="json")
                payload = {"repository": {"full_name": self.repo}, "issue": body}
                origin = f"{self.repo}#{issue.number}"
                opened = {**payload, "action": "opened", "sender": issue.user or {}}
                yield f"{origin} (issue opened)", bus_event("github", "issues", opened, issue.created_at)
                if issue.state == "closed" and issue.closed_at:
                    # The list does not say who closed it (only the issue itself does, when read alone).
                    closed = {**payload, "action": "closed", "sender": body.get("closed_by") or {}}
                    yield f"{origin} (issue closed)", bus_event("github", "issues", closed, issue.closed_at)
            if items:
                yield self._checkpoint("issues", since=items[-1].updated_at.isoformat())

    def _remember(self, issue: Issue) -> None:
        named: dict[str, Any] = {"number": issue.number, "title": issue.title}
        if issue.pull_request is not None:
            named["pull_request"] = issue.pull_request
        self._issues[issue.number] = named

    def _issue(self, number: int) -> dict[str, Any]:
        """What a comment payload names of its issue or pull request, read once if not seen yet."""
        if number not in self._issues:
            page = self._api.get(f"/repos/{self.repo}/issues/{number}")
            self._remember(page.parse(Issue, page.data, "an issue"))
        return self._issues[number]

    def _comments(self) -> Stream:
        for page in self._pages(f"/repos/{self.repo}/issues/comments", self._updated_since("comments")):
            items = page.items(Comment, "comments")
            for comment in items:
                tail = comment.issue_url.rstrip("/").rsplit("/", 1)[-1]
                if not tail.isdigit():
                    raise SourceError(f"{page.url}: comment {comment.id} has no issue number in {comment.issue_url}")
                payload = {
                    "action": "created",
                    "repository": {"full_name": self.repo},
                    "sender": comment.user or {},
                    "comment": comment.model_dump(mode="json"),
                    "issue": self._issue(int(tail)),
                }
                origin = f"{self.repo}#{tail} (comment {comment.id})"
                yield origin, bus_event("github", "issue_comment", payload, comment.created_at)
            if items:
                yield self._checkpoint("comments", since=items[-1].updated_at.isoformat())

    # -- releases -----------------------------------------------------------------------------

    def _releases(self) -> Stream:
        """Published releases (drafts are no one's history yet); the list is newest first and
        short, so it is read whole and the cursor keeps the newest publication written."""
        floor = self._floor("releases")
        newest = floor
        for page in self._pages(f"/repos/{self.repo}/releases"):
            for release in page.items(Release, "releases"):
                published = release.published_at
                if release.draft or published is None or (floor is not None and published < floor):
                    continue
                newest = max(newest, published) if newest else published
                payload = {
                    "action": "published",
                    "repository": {"full_name": self.repo},
                    "sender": release.author or {},
                    "release": release.model_dump(mode="json"),
                }
                origin = f"{self.repo} release {release.model_dump().get('tag_name', release.id)}"
                yield origin, bus_event("github", "release", payload, _stamp(published))
        if newest is not None:
            yield self._checkpoint("releases", since=newest.isoformat())
