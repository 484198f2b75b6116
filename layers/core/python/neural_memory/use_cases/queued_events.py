"""Indexing what the bus delivered (the SQS consumer, ``functions/ingest``; locally, a webhook's
event at once): records carry EventBridge events. The happy path indexes the whole
batch together (one embedding call and one store write per workspace); the records whose
observations the store refused, or all of them when the write itself failed, are then processed
one by one, so only the ones that really fail are reported, each with its reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neural_memory import json_input
from neural_memory.auth.roles import system
from neural_memory.errors import NeuralMemoryError, StoreRejected
from neural_memory.ingest.normalizers import UnsupportedEvent, normalize_eventbridge
from neural_memory.ingest.prepare import observation_id
from neural_memory.ingest.routing import workspace_for
from neural_memory.observability import logger

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import ObservationIn
    from neural_memory.settings import Settings
    from neural_memory.use_cases.writing import Writing


def observations_of(body: str, routes: dict[str, str]) -> tuple[str, list[ObservationIn]]:
    """The workspace and observations of one record body; raises with the reason when it cannot
    be understood (malformed JSON, unknown event, no configured workspace)."""
    try:
        event = json_input.parse(body)
    except json_input.JsonRefused as exc:
        raise UnsupportedEvent(f"record body refused: {exc}") from exc
    if not isinstance(event, dict):
        raise UnsupportedEvent("record body is not a JSON object")
    workspace_id = workspace_for(event, routes)
    normalized = normalize_eventbridge(event)
    if normalized.skipped:
        logger.info("event skipped", extra={"reason": normalized.skipped.reason, "event_id": event.get("id")})
    return workspace_id, normalized.observations


# Who writes what the bus delivers (webhooks, agents' events): the server itself, as ``createdBy``
# and in the audit trail.
EVENTS = system("events")


@dataclass(frozen=True)
class QueuedEvents:
    """Indexes the bus's records through ``writing``, each into the workspace ``settings`` route it to."""

    writing: Writing
    settings: Settings

    def index_together(self, records: Sequence[dict[str, Any]]) -> set[str]:
        """Index every understood record of the batch in one go per workspace; returns the message ids
        done: the understood ones none of whose observations the store refused, or none at all if a
        combined write failed."""
        by_workspace: dict[str, list[ObservationIn]] = {}
        understood: dict[str, tuple[str, set[str]]] = {}  # message id -> (workspace, observation ids)
        for record in records:
            try:
                workspace_id, observations = observations_of(record["body"], self.settings.ingest_routes)
            except Exception:  # whatever one record's content causes is that record's failure
                continue  # reported with its reason when processed on its own
            by_workspace.setdefault(workspace_id, []).extend(observations)
            understood[record["messageId"]] = (workspace_id, {observation_id(o) for o in observations})
        refused: set[tuple[str, str]] = set()
        try:
            for workspace_id, observations in by_workspace.items():
                if observations:
                    refused |= {
                        (workspace_id, i) for i in self.writing.index(workspace_id, observations, EVENTS).failed
                    }
        except Exception as exc:  # one record's observation may be the cause: find which
            reason = str(exc) if isinstance(exc, NeuralMemoryError) else f"{type(exc).__name__}: {exc}"
            logger.warning("batch write failed; processing records one by one", extra={"reason": reason})
            return set()
        return {
            message_id
            for message_id, (workspace_id, ids) in understood.items()
            if not any((workspace_id, i) in refused for i in ids)
        }

    def index_one(self, body: str, message_id: str | None = None) -> None:
        """Index one record on its own; raises (and so fails that record) with the reason, which is
        logged first: the record goes back to the queue (and at last to the DLQ) without it."""
        try:
            workspace_id, observations = observations_of(body, self.settings.ingest_routes)
            if observations:
                outcome = self.writing.index(workspace_id, observations, EVENTS)
                if outcome.failed:
                    raise StoreRejected.of(outcome.failed, len(outcome.ids))
        except Exception as exc:
            reason = {"messageId": message_id, "error": type(exc).__name__, "reason": str(exc)}
            logger.warning("record failed", extra=reason)
            raise
