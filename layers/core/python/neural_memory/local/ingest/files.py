"""Reading observations from files: EventBridge events, API Gateway events and API request bodies,
as ``.json`` documents or ``.jsonl`` lines, from files or folders."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from neural_memory import json_input
from neural_memory.ingest.normalizers import UnsupportedEvent, normalize_eventbridge
from neural_memory.models import ObservationIn, ObservationsRequest

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path


@dataclass
class Loaded:
    """What one document yielded: observations, or why it was skipped or failed."""

    origin: str
    observations: list[ObservationIn] = field(default_factory=list)
    skipped: str | None = None
    error: str | None = None
    document: Any = None  # kept for a failure report, so the document can be replayed


def expand(paths: Iterable[Path]) -> list[Path]:
    """Files named, plus ``*.json``/``*.jsonl`` under folders named, sorted for a stable order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix in {".json", ".jsonl"} and p.is_file()))
        else:
            found.append(path)
    return found


def _validation_message(exc: ValidationError) -> str:
    """Every problem, each naming its field (a line missing two fields names both)."""
    messages = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        messages.append(f"{where}: {error['msg']}" if where else error["msg"])
    return "; ".join(messages)


# The fields of an observation (ObservationIn's wire names): a document holding any of them is an
# observation with something missing, reported with what, never skipped as something else.
_OBSERVATION_FIELDS = frozenset(field.alias or name for name, field in ObservationIn.model_fields.items())


def load_document(document: Any, origin: str) -> Loaded:
    """Observations from one decoded JSON document, recognised by its shape."""
    if not isinstance(document, dict):
        return Loaded(origin, error="expected a JSON object", document=document)
    try:
        if "detail-type" in document:
            if str(document.get("source", "")).startswith("aws."):
                return Loaded(origin, skipped=f"AWS service event ({document.get('detail-type')}), not an observation")
            normalized = normalize_eventbridge(document)
            skipped = normalized.skipped.reason if normalized.skipped else None
            return Loaded(origin, observations=normalized.observations, skipped=skipped)
        if "httpMethod" in document:
            method, path = document.get("httpMethod"), str(document.get("path", ""))
            if method != "POST" or not path.endswith("/v1/observations"):
                return Loaded(origin, skipped=f"API Gateway event for {method} {path} is not an ingest request")
            body = document.get("body")
            if not isinstance(body, str):
                return Loaded(origin, error="API Gateway event has no body string", document=document)
            return Loaded(origin, observations=ObservationsRequest.model_validate_json(body).observations)
        if "observations" in document:
            return Loaded(origin, observations=ObservationsRequest.model_validate(document).observations)
        if "observationType" in document or _OBSERVATION_FIELDS & document.keys():
            return Loaded(origin, observations=[ObservationIn.model_validate(document)])
    except UnsupportedEvent as exc:
        return Loaded(origin, error=str(exc), document=document)
    except ValidationError as exc:
        return Loaded(origin, error=_validation_message(exc), document=document)
    return Loaded(origin, skipped="not an event or observation document")


def load_file(path: Path) -> list[Loaded]:
    """Every document of a ``.json`` file (one) or ``.jsonl`` file (one per non-empty line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [Loaded(str(path), error=f"cannot read: {exc}")]
    lines = [(f"{path}:{n}", line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    documents = lines if path.suffix == ".jsonl" else [(str(path), text)]
    loaded: list[Loaded] = []
    for origin, raw in documents:
        try:
            document = json_input.parse(raw)
        except json_input.JsonRefused as exc:
            loaded.append(Loaded(origin, error=f"invalid JSON: {exc}", document=raw))
            continue
        loaded.append(load_document(document, origin))
    return loaded
