"""The SQS consumer's logic: records carry EventBridge events. The happy path indexes the whole
batch together (one embedding call and one store write per workspace); when anything in that
fails, records are processed one by one so only the ones that really fail are reported."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from neural_memory.errors import NeuralMemoryError
from neural_memory.ingest.normalizers import UnsupportedEvent, normalize_eventbridge
from neural_memory.ingest.routing import workspace_for
from neural_memory.observability import logger

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import ObservationIn
    from neural_memory.service import Service


def observations_of(body: str, routes: dict[str, str]) -> tuple[str, list[ObservationIn]]:
    """The workspace and observations of one record body; raises with the reason when it cannot
    be understood (malformed JSON, unknown event, no configured workspace)."""
    try:
        event = json.loads(body)
    except json.JSONDecodeError as exc:
        raise UnsupportedEvent(f"record body is not JSON: {exc.msg}") from exc
    if not isinstance(event, dict):
        raise UnsupportedEvent("record body is not a JSON object")
    workspace_id = workspace_for(event, routes)
    normalized = normalize_eventbridge(event)
    if normalized.skipped:
        logger.info("event skipped", extra={"reason": normalized.skipped.reason, "event_id": event.get("id")})
    return workspace_id, normalized.observations


def index_together(service: Service, records: Sequence[dict[str, Any]]) -> set[str]:
    """Index every understood record of the batch in one go per workspace; returns the message ids
    done (all understood ones on success, none if the combined write failed)."""
    by_workspace: dict[str, list[ObservationIn]] = {}
    understood: list[str] = []
    for record in records:
        try:
            workspace_id, observations = observations_of(record["body"], service.settings.ingest_routes)
        except (UnsupportedEvent, KeyError):
            continue  # reported with its reason when processed on its own
        by_workspace.setdefault(workspace_id, []).extend(observations)
        understood.append(record["messageId"])
    try:
        for workspace_id, observations in by_workspace.items():
            if observations:
                service.index(workspace_id, observations)
    except NeuralMemoryError as exc:
        logger.warning("batch write failed; processing records one by one", extra={"reason": str(exc)})
        return set()
    return set(understood)


def index_one(service: Service, body: str) -> None:
    """Index one record on its own; raises (and so fails that record) with the reason."""
    workspace_id, observations = observations_of(body, service.settings.ingest_routes)
    if observations:
        service.index(workspace_id, observations)
