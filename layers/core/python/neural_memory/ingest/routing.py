"""Which workspace an incoming webhook event belongs to: configuration decides, not the payload."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.ingest.normalizers.base import UnsupportedEvent, dig

if TYPE_CHECKING:
    from collections.abc import Mapping


def route_key(event: dict[str, Any]) -> str:
    """``github:<owner/repo>``, ``vercel:<team id>`` or ``neural-memory:<workspace>`` for an EventBridge event."""
    source = event.get("source")
    raw = event.get("detail")
    detail: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if source == "github":
        repo = dig(detail, "repository", "full_name")
        if isinstance(repo, str):
            return f"github:{repo}"
    if source == "vercel":
        team = dig(detail, "payload", "team", "id")
        if isinstance(team, str):
            return f"vercel:{team}"
    if source == "neural-memory":
        # Our own clients name a workspace; configuration must confirm that the bus may write to it.
        workspace = detail.get("workspace")
        if isinstance(workspace, str):
            return f"neural-memory:{workspace}"
    raise UnsupportedEvent(f"cannot tell the repository or team of a {source!r} event")


def workspace_for(event: dict[str, Any], routes: Mapping[str, str]) -> str:
    """The configured workspace of the event's repository or team; ``UnsupportedEvent`` if none is."""
    key = route_key(event)
    workspace = routes.get(key)
    if workspace is None:
        raise UnsupportedEvent(f"no workspace is configured for {key} (NM_INGEST_ROUTES)")
    return workspace
