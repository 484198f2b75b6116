"""``neural-memory import vercel PROJECT``: a project's deployments from Vercel's REST API
(``/v6/deployments``, newest first, paged by ``until=pagination.next``), each as the webhook body
of its state (READY: ``deployment.succeeded``, ERROR: ``.error``, CANCELED: ``.canceled``, still
building: ``.created``) with the commit it carried.

The normalizer names a deployment's observation by the deployment and its state, so a webhook of
the same state after the import updates it. The cursor keeps the newest deployment of the last
complete walk (``since``: a re-run walks down to it) and, for a walk cut short, where it got to
(``walk``: ``until``, and ``top``, the newest it started from).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from neural_memory.local.history.cursor import Checkpoint
from neural_memory.local.history.events import bus_event
from neural_memory.local.history.rest import RestSource, SourceError

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx

    Stream = Iterator[tuple[str, dict[str, Any]] | Checkpoint]

API = "https://api.vercel.com"
LIMIT = 100
STATES = {
    "READY": "deployment.succeeded",
    "ERROR": "deployment.error",
    "CANCELED": "deployment.canceled",
    "BUILDING": "deployment.created",
    "QUEUED": "deployment.created",
    "INITIALIZING": "deployment.created",
}


class Deployment(BaseModel):
    """A deployment as ``/v6/deployments`` lists it (what the import reads of it)."""

    model_config = ConfigDict(extra="allow")

    uid: str
    name: str | None = None
    url: str | None = None
    created: int
    state: str | None = None
    readyState: str | None = None  # Vercel's names
    ready: int | None = None
    target: str | None = None
    inspectorUrl: str | None = None
    projectId: str | None = None
    meta: dict[str, Any] | None = None


class Pagination(BaseModel):
    next: int | None = None


class DeploymentsPage(BaseModel):
    deployments: list[Deployment]
    pagination: Pagination = Pagination()


def vercel_source(
    token: str, api_base: str = API, transport: httpx.BaseTransport | None = None, backoff_s: float = 0.5
) -> RestSource:
    headers = {"Authorization": f"Bearer {token}", "User-Agent": "neural-memory-import"}
    return RestSource("Vercel", api_base, headers, transport=transport, backoff_s=backoff_s)


def webhook_body(deployment: Deployment, team: str | None) -> dict[str, Any] | None:
    """The webhook body Vercel would have sent for the deployment's state, or None for a state
    no webhook reports (e.g. deleted)."""
    kind = STATES.get(deployment.readyState or deployment.state or "")
    if kind is None:
        return None
    ended = kind != "deployment.created" and deployment.ready is not None
    payload: dict[str, Any] = {
        "deployment": {
            "id": deployment.uid,
            "name": deployment.name,
            "url": deployment.url,
            "inspectorUrl": deployment.inspectorUrl,
            "meta": deployment.meta or {},
        },
        "links": {"deployment": deployment.inspectorUrl},
        "name": deployment.name,
        "target": deployment.target,
        "project": {"id": deployment.projectId},
    }
    if team:
        payload["team"] = {"id": team}
    return {"type": kind, "createdAt": deployment.ready if ended else deployment.created, "payload": payload}


class VercelImport:
    """One project's deployments as bus events and checkpoints; ``state`` is the cursor's."""

    def __init__(
        self, api: RestSource, project: str, state: dict[str, Any], team: str | None = None, since: str | None = None
    ) -> None:
        self._api = api
        self.project = project
        self.state = state
        self._team = team
        self._since_ms = int(datetime.fromisoformat(since).timestamp() * 1000) if since else None
        self.skipped = 0  # deployments in a state no webhook reports

    def events(self) -> Stream:
        walk = self.state.get("walk")
        if isinstance(walk, dict) and isinstance(walk.get("until"), int):
            # A walk cut short: finish it, then walk down from the newest to where it started.
            top = walk.get("top")
            yield from self._walk(walk["until"], top if isinstance(top, int) else None)
        yield from self._walk(None, None)

    def _stop(self) -> int | None:
        bounds = [b for b in (self.state.get("since"), self._since_ms) if isinstance(b, int)]
        return max(bounds) if bounds else None

    def _walk(self, until: int | None, top: int | None) -> Stream:
        """Deployments from the newest (or ``until``) down to the cursor's ``since``."""
        stop = self._stop()
        while True:
            params: dict[str, str | int] = {"projectId": self.project, "limit": LIMIT}
            if until is not None:
                params["until"] = until
            if self._team:
                params["teamId"] = self._team
            page = self._api.get("/v6/deployments", params)
            if not isinstance(page.data, dict):
                raise SourceError(f"{page.url}: expected an object with deployments, got {type(page.data).__name__}")
            listed = page.parse(DeploymentsPage, page.data, "a page of deployments")
            reached = False
            for deployment in listed.deployments:
                if stop is not None and deployment.created < stop:
                    reached = True
                    break
                top = deployment.created if top is None else max(top, deployment.created)
                body = webhook_body(deployment, self._team)
                if body is None:
                    self.skipped += 1
                    continue
                origin = f"{self.project} {deployment.uid} ({body['type']})"
                yield origin, bus_event("vercel", str(body["type"]), body)
            until = listed.pagination.next
            if reached or until is None:
                self.state.pop("walk", None)
                if top is not None:
                    self.state["since"] = max(top, stop or top)
                yield Checkpoint(self.state)
                return
            self.state["walk"] = {"until": until, "top": top if top is not None else stop}
            yield Checkpoint(self.state)
