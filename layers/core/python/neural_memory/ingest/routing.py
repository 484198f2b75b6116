"""Which workspace an incoming webhook event belongs to: configuration decides, not the payload.

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

if TYPE_CHECKING:
    from collections.abc import Mapping

ROUTES_FILE = Path("ingest-routes.json")
_ROUTE_KEY = re.compile(r"^(github:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+|vercel:[A-Za-z0-9_]+|neural-memory:.+)$")


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


def check_route(key: str, workspace: str) -> None:
    """``ValueError`` naming the problem unless ``key`` is ``github:<owner/repo>``,
    ``vercel:<team id>`` or ``neural-memory:<workspace>`` and ``workspace`` is a workspace name."""
    if not _ROUTE_KEY.match(key):
        raise ValueError(f"{key!r} is not github:<owner/repo>, vercel:<team id> or neural-memory:<workspace>")
    if not WORKSPACE_PATTERN.match(workspace):
        raise ValueError(f"{workspace!r} is not a workspace name (1..64 letters, digits, '.', '_' or '-')")


def parse_routes(value: object, where: str) -> dict[str, str]:
    """A routing table from JSON text or an already parsed object, every entry checked
    (``ValueError`` naming ``where`` and the problem)."""
    routes = json.loads(value) if isinstance(value, str) else value
    if not isinstance(routes, dict) or not all(isinstance(v, str) for v in routes.values()):
        raise ValueError(f"{where}: expected a JSON object of route -> workspace")
    for key, workspace in routes.items():
        check_route(str(key), workspace)
    return {str(key): workspace for key, workspace in routes.items()}


def load_routes(path: Path) -> dict[str, str]:
    """The routing table of ``path`` (empty when there is no file), every entry checked."""
    return parse_routes(path.read_text(), str(path)) if path.exists() else {}


def save_routes(path: Path, routes: Mapping[str, str]) -> None:
    """Write the routing table, sorted, so changes read well in a diff."""
    path.write_text(json.dumps(dict(sorted(routes.items())), indent=2) + "\n")
