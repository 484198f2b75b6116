"""The sample events of ``events/`` as tests use them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
NOW = datetime(2025, 12, 14, 12, 0, tzinfo=UTC)


def load_event(name: str) -> dict[str, Any]:
    """A sample event from ``events/`` (e.g. ``api/search_post``)."""
    event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    return event


def api_event(name: str, body: Any = None, workspace: str | None = "acme", **overrides: Any) -> dict[str, Any]:
    """A sample API Gateway event with another body or workspace (the rest as recorded)."""
    event = load_event(name)
    if body is not None:
        event["body"] = body if isinstance(body, str) else json.dumps(body)
    if workspace is None:
        event["requestContext"].pop("authorizer", None)
    else:
        event["requestContext"]["authorizer"]["workspaceId"] = workspace
    event.update(overrides)
    return event
