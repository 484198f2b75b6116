"""Which workspace an incoming event belongs to: configuration decides, not the payload.

An agent's event names its workspace in its ``source`` (``neural-memory.<workspace>``), which the
stack lets only that workspace's agent grant put; the route ``neural-memory:<workspace>`` confirms
the workspace takes agents' events. A ``workspace`` in its detail is never believed: one that
disagrees with the source refuses the event.

The routing table lives in ``ingest-routes.json`` (``neural-memory routes add|remove|list``): the
CDK app puts it into the ingest and webhook functions' ``NM_INGEST_ROUTES`` at every deploy, and
``make serve`` reads it at start.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neural_memory.auth.keys import WORKSPACE_PATTERN
from neural_memory.ingest.normalizers.base import UnsupportedEvent, dig
from neural_memory.ingest.normalizers.generic import SOURCE_PREFIX, workspace_of

if TYPE_CHECKING:
    from collections.abc import Mapping

ROUTES_FILE = Path("ingest-routes.json")
_ROUTE_KEY = re.compile(r"^(github:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+|vercel:[A-Za-z0-9_]+|neural-memory:.+)$")
AGENT_ROUTE = "neural-memory:"  # the routes of workspaces whose agents may put events on the bus
# Before per-workspace sources, agents named their workspace in the detail, which IAM cannot check.
_RETIRED_SOURCE = SOURCE_PREFIX.rstrip(".")


def route_key(event: dict[str, Any]) -> str:
    """``github:<owner/repo>``, ``vercel:<team id>`` or ``neural-memory:<workspace>`` for an EventBridge
    event; ``UnsupportedEvent`` for an agent event whose detail names another workspace than its source."""
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
    workspace = workspace_of(source) if isinstance(source, str) else None
    if workspace is not None:
        # The source is what the agent's grant allowed; a detail claiming another workspace is a
        # mistake or an attempt, refused either way rather than silently filed under the source's.
        claimed = detail.get("workspace", workspace)
        if claimed != workspace:
            raise UnsupportedEvent(
                f"detail.workspace {claimed!r} disagrees with the event's source {source!r}: "
                f"an agent event goes to the workspace its source names"
            )
        return f"{AGENT_ROUTE}{workspace}"
    if source == _RETIRED_SOURCE:
        raise UnsupportedEvent(
            f"the source {_RETIRED_SOURCE!r} is no longer accepted: put agent events with the source "
            f"{SOURCE_PREFIX}<workspace> (README, 'Agents on the bus')"
        )
    raise UnsupportedEvent(f"cannot tell the repository or team of a {source!r} event")


def workspace_for(event: dict[str, Any], routes: Mapping[str, str]) -> str:
    """The configured workspace of the event's repository or team; ``UnsupportedEvent`` if none is."""
    key = route_key(event)
    workspace = routes.get(key)
    if workspace is None:
        raise UnsupportedEvent(f"no workspace is configured for {key} (NM_INGEST_ROUTES)")
    return workspace


def check_route(key: str, workspace: str) -> None:
    """``ValueError`` naming the problem unless ``key`` is ``github:<owner/repo>``,
    ``vercel:<team id>`` or ``neural-memory:<workspace>`` and ``workspace`` is a workspace name
    (for ``neural-memory:<workspace>``, that same workspace: an agent's source names where it writes)."""
    if not _ROUTE_KEY.match(key):
        raise ValueError(f"{key!r} is not github:<owner/repo>, vercel:<team id> or neural-memory:<workspace>")
    if not WORKSPACE_PATTERN.match(workspace):
        raise ValueError(f"{workspace!r} is not a workspace name (1..64 letters, digits, '.', '_' or '-')")
    if key.startswith(AGENT_ROUTE) and key.removeprefix(AGENT_ROUTE) != workspace:
        name = key.removeprefix(AGENT_ROUTE)
        raise ValueError(f"{key!r} must route to {name!r}: an agent's source names the workspace it writes to")


def agent_workspaces(routes: Mapping[str, str]) -> list[str]:
    """The workspaces whose agents may put events on the bus (a ``neural-memory:<workspace>``
    route each), sorted: the stack grants each one its own source."""
    return sorted(workspace for key, workspace in routes.items() if key.startswith(AGENT_ROUTE))


def parse_routes(value: object, where: str) -> dict[str, str]:
    """A routing table from JSON text or an already parsed object, every entry checked
    (``ValueError`` naming ``where`` and the problem)."""
    routes = json.loads(value) if isinstance(value, str) else value
    if not isinstance(routes, dict) or not all(isinstance(v, str) for v in routes.values()):
        raise ValueError(f"{where}: expected a JSON object of route -> workspace")
    for key, workspace in routes.items():
        try:
            check_route(str(key), workspace)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from exc
    return {str(key): workspace for key, workspace in routes.items()}


def load_routes(path: Path) -> dict[str, str]:
    """The routing table of ``path`` (empty when there is no file), every entry checked."""
    return parse_routes(path.read_text(), str(path)) if path.exists() else {}


def save_routes(path: Path, routes: Mapping[str, str]) -> None:
    """Write the routing table, sorted, so changes read well in a diff."""
    path.write_text(json.dumps(dict(sorted(routes.items())), indent=2) + "\n")
