"""The EventBridge events an importer builds: the shape the webhook receivers put on the bus, so
``ingest.files.load_document`` (and the normalizers behind it) read an import as a delivery."""

from __future__ import annotations

from typing import Any


def bus_event(source: str, detail_type: str, detail: dict[str, Any], time: str | None = None) -> dict[str, Any]:
    """One EventBridge event of ``source`` (``github``, ``vercel``) carrying a webhook payload."""
    event: dict[str, Any] = {"version": "0", "source": source, "detail-type": detail_type, "detail": detail}
    if time is not None:
        event["time"] = time
    return event
