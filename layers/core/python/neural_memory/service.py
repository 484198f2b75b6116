"""The composition root: a ``Service`` holds a store and providers and serves every use case.

Handlers, the local server, the CLI and tests all go through ``Service``; ``build_service``
chooses the providers from settings, and tests may pass their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.clock import utcnow
from neural_memory.errors import NotFound
from neural_memory.ingest.prepare import embedding_text, prepare
from neural_memory.ingest.tiers import is_embedded
from neural_memory.models import (
    DeleteResponse,
    ObservationOut,
    ObservationsResponse,
    SearchResponse,
    UpsertOutcome,
)
from neural_memory.observability import (
    METRIC_DEGRADED,
    METRIC_OBSERVATIONS_CREATED,
    METRIC_OBSERVATIONS_UPDATED,
    METRIC_RESULTS_RETURNED,
    record_count,
    record_latency,
)
from neural_memory.pipeline import SearchPipeline

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from neural_memory.embeddings.base import Embedder
    from neural_memory.models import ObservationIn, SearchRequest
    from neural_memory.settings import Settings
    from neural_memory.stores.base import IndexedObservation, Store


class Service:
    """Search, ingest, read and delete observations of one workspace at a time."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        settings: Settings,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self._clock = clock
        self._pipeline = SearchPipeline(store, embedder, settings)

    def search(self, workspace_id: str, request: SearchRequest, request_id: str) -> SearchResponse:
        """Run the pipeline and emit its latency and result metrics."""
        outcome = self._pipeline.run(workspace_id, request, self._clock())
        record_latency(outcome.latency.model_dump(by_alias=True))
        record_count(METRIC_RESULTS_RETURNED, len(outcome.results))
        if outcome.degraded:
            record_count(METRIC_DEGRADED, len(outcome.degraded))
        return SearchResponse(
            request_id=request_id,
            results=outcome.results,
            latency=outcome.latency,
            llm=outcome.llm,
            degraded=outcome.degraded,
        )

    def index(self, workspace_id: str, observations: Sequence[ObservationIn]) -> UpsertOutcome:
        """Prepare, embed (one batch call) and upsert; the same id updates in place."""
        now = self._clock()
        items = [
            prepare(o, now=now, policy=self.settings.tier_policy, ttl_days=self.settings.collaborative_ttl_days)
            for o in observations
        ]
        self._embed(items)
        outcome = self.store.upsert(workspace_id, items)
        record_count(METRIC_OBSERVATIONS_CREATED, len(outcome.created))
        record_count(METRIC_OBSERVATIONS_UPDATED, len(outcome.updated))
        return outcome

    def _embed(self, items: Sequence[IndexedObservation]) -> None:
        if self.embedder is None:
            return
        targets = [(item, chunk) for item in items if is_embedded(item.record.tier) for chunk in item.chunks]
        texts = [embedding_text(item.record.title, chunk.text) for item, chunk in targets]
        for (item, chunk), vector in zip(targets, self.embedder.embed(texts, "search_document"), strict=True):
            chunk.vector = vector
            item.model_id = self.embedder.model_id

    def ingest(self, workspace_id: str, observations: Sequence[ObservationIn], request_id: str) -> ObservationsResponse:
        """``POST /v1/observations``: ids in request order, and how many were created or updated."""
        outcome = self.index(workspace_id, observations)
        return ObservationsResponse(
            ids=list(dict.fromkeys(outcome.ids)),
            created=len(outcome.created),
            updated=len(outcome.updated),
            request_id=request_id,
        )

    def get(self, workspace_id: str, observation_id: str, request_id: str) -> ObservationOut:
        """One observation of the workspace, or ``NotFound``."""
        record = self.store.get(workspace_id, observation_id)
        if record is None:
            raise NotFound(f"observation {observation_id!r} not found")
        return ObservationOut(**record.model_dump(exclude={"content_hash"}), request_id=request_id)

    def delete(self, workspace_id: str, observation_id: str, request_id: str) -> DeleteResponse:
        """Delete one observation of the workspace with its chunks, or ``NotFound``."""
        if not self.store.delete(workspace_id, observation_id):
            raise NotFound(f"observation {observation_id!r} not found")
        return DeleteResponse(id=observation_id, deleted=True, request_id=request_id)


def build_service(settings: Settings) -> Service:
    """A service with the store and providers that ``settings`` name (nothing loads until first use)."""
    from neural_memory.embeddings import build_embedder  # noqa: PLC0415
    from neural_memory.stores import build_store  # noqa: PLC0415

    return Service(build_store(settings), build_embedder(settings), settings)


_service: Service | None = None


def get_service() -> Service:
    """The process-wide service, built from ``get_settings()`` on first call."""
    global _service  # noqa: PLW0603 - one service per process, like Powertools' singletons
    if _service is None:
        from neural_memory.settings import get_settings  # noqa: PLC0415

        _service = build_service(get_settings())
    return _service


def set_service(service: Service | None) -> None:
    """Install the service the handlers use (the local server and tests build their own)."""
    global _service  # noqa: PLW0603
    _service = service
