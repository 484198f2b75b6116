"""Where an import writes: the embedded store of a data folder, or a deployed API.

Both take the documents an importer yields (bus events), in batches, and add up one
``IngestReport``: created, updated, skipped with reasons, and failures with the document (written
as a failure report ``neural-memory replay`` reads, so nothing is lost).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from neural_memory.local.ingest.files import Loaded, load_document
from neural_memory.local.ingest.runner import Failure, Indexes, IngestReport, failed_document, ingest_loaded, sort_out

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from neural_memory.local.client import NeuralMemoryClient

BATCH = 256  # documents written at a time: one embedding call each, long enough to sort out padding


class Sink(Protocol):
    """Writes loaded documents and counts what happened in ``report``."""

    report: IngestReport

    def write(self, loaded: list[Loaded]) -> None: ...


class EmbeddedSink:
    """The embedded store, through the service's write path (as ``neural-memory ingest``)."""

    def __init__(self, service: Indexes, workspace_id: str) -> None:
        self._service = service
        self._workspace_id = workspace_id
        self.report = IngestReport()

    def write(self, loaded: list[Loaded]) -> None:
        done = ingest_loaded(self._service, self._workspace_id, loaded, batch_size=len(loaded) or 1)
        _add(self.report, done)


class ApiSink:
    """A running API (a deployed stack or ``serve``): ``POST /v1/observations`` through the client,
    whose key names the workspace."""

    def __init__(self, client: NeuralMemoryClient) -> None:
        self._client = client
        self.report = IngestReport()

    def write(self, loaded: list[Loaded]) -> None:
        from neural_memory.local.client import ApiError, TransportFailed

        observations = sort_out(loaded, self.report)
        if not observations:
            return
        try:
            reply = self._client.add([observation for observation, _ in observations])
        except (ApiError, TransportFailed) as exc:
            for observation, origin in observations:
                self.report.failures.append(Failure(origin, str(exc), failed_document(observation)))
            return
        self.report.created += reply.created
        self.report.updated += reply.updated
        self.report.redacted += reply.redacted


def _add(total: IngestReport, part: IngestReport) -> None:
    total.created += part.created
    total.updated += part.updated
    total.redacted += part.redacted
    total.skipped.extend(part.skipped)
    total.failures.extend(part.failures)


def run_import(
    documents: Iterable[tuple[str, dict[str, Any]]],
    sink: Sink,
    progress: Callable[[int], None] | None = None,
    batch_size: int = BATCH,
) -> IngestReport:
    """Load each (origin, bus event) and write them in batches of ``batch_size`` as they come (an
    importer reading an API never holds a whole history in memory); ``progress`` gets each
    batch's count of documents."""
    batch: list[Loaded] = []

    def flush() -> None:
        if batch:
            sink.write(batch)
            if progress:
                progress(len(batch))
            batch.clear()

    try:
        for origin, document in documents:
            batch.append(load_document(document, origin))
            if len(batch) >= batch_size:
                flush()
    except Exception:
        flush()  # a source failing mid-way: what it gave before is still written (and its cursor saved)
        raise
    flush()
    return sink.report
