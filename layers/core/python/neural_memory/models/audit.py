"""The audit trail's contract (``GET /v1/audit``): entries newest first, a page at a time, and the
question a reader asks of it (``AuditQuery``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import Field

from neural_memory.audit_actions import Action
from neural_memory.models.wire import WireModel

__all__ = ["DEFAULT_PAGE", "MAX_PAGE", "Action", "AuditEntryOut", "AuditQuery", "AuditResponse"]

DEFAULT_PAGE = 50
MAX_PAGE = 500


class AuditEntryOut(WireModel):
    """One thing done to the workspace's memory: when, by which key, what, to which observations."""

    id: str = Field(description="The entry's id; entries sort by it as they happened")
    at: datetime
    key: str = Field(description="The name of the API key that did it (`system:<what>`: the server's own writers)")
    action: str = Field(description="write, change, delete, promote, scrub, purge, key.create or key.revoke")
    ids: list[str] = Field(description="The observations (or, for a key, its id) concerned: at most 1000")
    count: int = Field(description="How many in all (a purge counts what it deleted; it lists no ids)")
    call_request_id: str | None = Field(default=None, description="The request id of the call that did it")


class AuditResponse(WireModel):
    """Reply of ``GET /v1/audit``."""

    entries: list[AuditEntryOut]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page (older entries); null when this is the last page"
    )
    request_id: str


@dataclass(frozen=True)
class AuditQuery:
    """Which entries of a workspace, newest first: by key name, by action, at or after ``start``,
    at or before ``end``, below ``cursor`` (the last id of the previous page), ``limit`` at most."""

    key: str | None = None
    action: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    cursor: str | None = None
    limit: int = DEFAULT_PAGE
