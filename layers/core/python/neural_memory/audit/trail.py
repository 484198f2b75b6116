"""The audit trail's entry, the question a reader asks of it, and the port each backend implements.

An entry says when, which key (its name: ``auth/roles.py``), what (``Action``), which observations
(their ids, at most ``MAX_IDS``; ``count`` is how many in all) and the request; never content.
Entries are written before the call they record is acknowledged, in the store the observations live
in, with its durability (SQLite: the same file and ``synchronous``; OpenSearch: a refreshed write
to the workspace's audit index), so an acknowledged call's entry survives a killed process.

An entry's id begins with its time in milliseconds, zero-padded, so ids sort as entries happened:
a page is the entries newest first, and the next page starts below the last id read (``cursor``)."""

from __future__ import annotations

import itertools
import secrets
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from neural_memory.audit_actions import ACTIONS, Action
from neural_memory.clock import to_ms, utcnow
from neural_memory.models import DomainModel
from neural_memory.models.audit import AuditQuery

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["ACTIONS", "Action", "AuditEntry", "AuditLog", "AuditQuery", "entry"]

MAX_IDS = 1000  # ids kept in one entry (``count`` says how many there were)


class AuditEntry(DomainModel):
    """One thing done to a workspace's memory (the workspace is passed alongside)."""

    id: str
    at: datetime
    key: str
    action: Action
    ids: list[str]
    count: int
    request_id: str | None = None


_sequence = itertools.count()


def entry(
    key: str, action: Action, ids: Sequence[str], count: int | None = None, request_id: str | None = None
) -> AuditEntry:
    """An entry made now, by the wall clock (not a service's clock, which an evaluation may set to
    its data's time). Its id sorts by time, then in this process's order, then at random (two
    processes in one millisecond)."""
    unique = list(dict.fromkeys(ids))
    at = utcnow()
    return AuditEntry(
        id=f"{to_ms(at):015d}-{next(_sequence) % 0x1000000:06x}{secrets.token_hex(3)}",
        at=at,
        key=key,
        action=action,
        ids=unique[:MAX_IDS],
        count=len(unique) if count is None else count,
        request_id=request_id,
    )


class AuditLog(Protocol):
    """Where a store keeps its workspaces' audit trails."""

    def record(self, workspace_id: str, entries: Sequence[AuditEntry]) -> None:
        """Keep the entries durably before returning (a failure raises: the call is not acknowledged)."""
        ...

    def read(self, workspace_id: str, query: AuditQuery) -> list[AuditEntry]:
        """The workspace's entries meeting ``query``, newest first, ``query.limit`` at most."""
        ...
