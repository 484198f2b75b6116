"""Ingesting documents in batches with progress, and a failure report that can be replayed.

A failure report is JSON Lines: one line per document that could not be ingested, with where it
came from, why, and the document itself (so ``replay`` needs nothing else).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from neural_memory.errors import BackendUnavailable, NeuralMemoryError
from neural_memory.local.ingest.files import load_document
from neural_memory.redaction.observations import redact, redacted_document

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from pathlib import Path

    from neural_memory.local.ingest.files import Loaded
    from neural_memory.models import ObservationIn, UpsertOutcome


class Indexes(Protocol):
    """What a run writes through: ``Service.index`` (the whole write path: redaction, vetting, the
    lifecycle, embedding, the store)."""

    def index(self, workspace_id: str, observations: Sequence[ObservationIn]) -> UpsertOutcome: ...


@dataclass
class Failure:
    """One document that was not ingested."""

    origin: str
    reason: str
    document: Any


@dataclass
class IngestReport:
    """What a run did."""

    created: int = 0
    updated: int = 0
    redacted: int = 0  # written with a secret replaced (redaction/)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)


def ingest_loaded(
    service: Indexes,
    workspace_id: str,
    loaded: Iterable[Loaded],
    batch_size: int = 64,
    progress: Callable[[int], None] | None = None,
) -> IngestReport:
    """Index every observation of ``loaded`` in batches (one embedding call and one store write
    each). When a batch fails for one observation's sake, its observations are indexed one by one
    so only the faulty ones are reported (with the reason); when a backend is down, all are."""
    report = IngestReport()
    pending = sort_out(loaded, report)
    for start in range(0, len(pending), batch_size):
        batch = pending[start : start + batch_size]
        try:
            _index(service, workspace_id, batch, report)
        except BackendUnavailable as exc:  # the store or the embedder is down: each would fail alike
            report.failures.extend(_failure(origin, observation, exc) for observation, origin in batch)
        except Exception:  # one observation's fault (a supersession cycle...): find which
            for one in batch:
                try:
                    _index(service, workspace_id, [one], report)
                except Exception as exc:  # reported as this one's failure; the run goes on
                    report.failures.append(_failure(one[1], one[0], exc))
        if progress:
            progress(len(batch))
    return report


def sort_out(loaded: Iterable[Loaded], report: IngestReport) -> list[tuple[ObservationIn, str]]:
    """The observations of ``loaded``, each with where it came from; what was skipped or failed to
    load goes to ``report``."""
    pending: list[tuple[ObservationIn, str]] = []
    for item in loaded:
        if item.error:
            report.failures.append(Failure(item.origin, item.error, redacted_document(item.document)))
        elif item.skipped:
            report.skipped.append((item.origin, item.skipped))
        pending.extend((observation, item.origin) for observation in item.observations)
    return pending


def _index(service: Indexes, workspace_id: str, batch: list[tuple[ObservationIn, str]], report: IngestReport) -> None:
    outcome = service.index(workspace_id, [observation for observation, _ in batch])
    report.created += len(outcome.created)
    report.updated += len(outcome.updated)
    report.redacted += len(outcome.redacted)


def _failure(origin: str, observation: ObservationIn, exc: Exception) -> Failure:
    reason = str(exc) if isinstance(exc, NeuralMemoryError) else f"{type(exc).__name__}: {exc}"
    return Failure(origin, reason, failed_document(observation))


def failed_document(observation: ObservationIn) -> dict[str, Any]:
    """An observation as a failure report keeps it: redacted (a report is a file too), so a secret
    that made it fail, or that it carried, is not written down there either."""
    return redact(observation).observation.model_dump(mode="json", by_alias=True, exclude_none=True)


def write_failures(path: Path, failures: Iterable[Failure]) -> int:
    """Write the failure report (replacing ``path``); returns how many lines."""
    lines = [json.dumps({"origin": f.origin, "reason": f.reason, "document": f.document}) for f in failures]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def read_failures(path: Path) -> list[Loaded]:
    """The documents of a failure report, loaded again (a document kept as raw text is re-parsed)."""
    loaded = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        entry = json.loads(line)
        document = entry.get("document")
        if isinstance(document, str):
            with contextlib.suppress(json.JSONDecodeError):
                document = json.loads(document)
        origin = f"{entry.get('origin', path)} (replayed from {path}:{n})"
        loaded.append(load_document(document, origin))
    return loaded
