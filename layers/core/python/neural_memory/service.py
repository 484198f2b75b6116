"""The composition root: ``Service`` wires a store and providers to the use cases and hands each
call to the module that owns it (``use_cases/``: searching, answering, writing, promotion,
reading, deletion, the engineering views, upkeep; CONTRIBUTING "Where each use case lives").

Handlers, the local server, the CLI and tests all go through ``Service``; ``build_service``
chooses the providers from settings, and tests may pass their own. A method here only hands the
call on: what a use case does, and its docstring, live in its module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.auth.roles import OPERATOR
from neural_memory.clock import utcnow
from neural_memory.redaction.identifiers import stored_id
from neural_memory.search.pipeline import SearchPipeline
from neural_memory.search.tiers import visible_after
from neural_memory.use_cases import auditing, lineage
from neural_memory.use_cases.answers import Answers
from neural_memory.use_cases.chat_turns import ChatTurns
from neural_memory.use_cases.deletion import delete_observation
from neural_memory.use_cases.embedding import Embedding
from neural_memory.use_cases.experts import find_experts
from neural_memory.use_cases.promotion import Promotion
from neural_memory.use_cases.reading import read_observation
from neural_memory.use_cases.searching import Searching
from neural_memory.use_cases.upkeep import Upkeep
from neural_memory.use_cases.writing import Writing

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from neural_memory.answer.answering import LlmAnswerer
    from neural_memory.audit.trail import AuditLog, AuditQuery
    from neural_memory.auth.roles import Caller
    from neural_memory.ingest.chunking import Chunking
    from neural_memory.models import (
        AnswerRequest,
        AnswerResponse,
        AuditResponse,
        DeleteResponse,
        ExpertsRequest,
        ExpertsResponse,
        FacetsResponse,
        LineageResponse,
        ObservationIn,
        ObservationOut,
        ObservationRecord,
        ObservationsResponse,
        SearchFilters,
        SearchRequest,
        SearchResponse,
        UpsertOutcome,
        Vector,
    )
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.providers.embeddings.vector_cache import VectorCache
    from neural_memory.providers.llm.gating import RelevanceScorer
    from neural_memory.providers.rerank.base import Reranker
    from neural_memory.search.filters.inference import FilterProposer
    from neural_memory.settings import Settings
    from neural_memory.stores.base import IndexedObservation, Store
    from neural_memory.use_cases.queued_events import QueuedEvents
    from neural_memory.use_cases.scrubbing import Scrub, ScrubCursor, ScrubReport


class Service:
    """Search, ingest, read and delete observations of one workspace at a time."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        settings: Settings,
        clock: Callable[[], datetime] = utcnow,
        embedding_cache: VectorCache | None = None,
        scorer: RelevanceScorer | None = None,
        reranker: Reranker | None = None,
        answerer: LlmAnswerer | None = None,
        proposer: FilterProposer | None = None,
        local_reranker: Reranker | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        from neural_memory.audit.factory import audit_log_for

        self.store = store
        # The audit trail lives where the observations do (``audit/factory.py``) unless given.
        self.audit = audit if audit is not None else audit_log_for(store)
        self.settings = settings
        self._clock = clock
        # The search keeps the embedder it was built with; writing reads ``embedder`` at each call.
        self._pipeline = SearchPipeline(
            store, embedder, settings, scorer=scorer, cohere=reranker, proposer=proposer, local=local_reranker
        )
        self._embedding = Embedding(embedder, embedding_cache, settings, clock)
        self._turns = ChatTurns(store, settings, clock, self._embedding)
        self._searching = Searching(self._pipeline, store, settings, clock)
        self._promotion = Promotion(store, clock, self.audit)
        self._answers = Answers(self._pipeline, store, answerer, self._promotion, settings, clock)
        self._writing = Writing(store, self._embedding, self._turns, settings, clock, self.audit)
        self._upkeep = Upkeep(store, self._embedding, self._turns, settings, self.audit)

    @property
    def embedder(self) -> Embedder | None:
        """The embedder of writes (None: lexical only); a caller may replace it (a benchmark timing it)."""
        return self._embedding.embedder

    @embedder.setter
    def embedder(self, embedder: Embedder | None) -> None:
        self._embedding.embedder = embedder

    @property
    def embedding_cache(self) -> VectorCache | None:  # replaceable too (an evaluation's shared cache)
        return self._embedding.cache

    @embedding_cache.setter
    def embedding_cache(self, cache: VectorCache | None) -> None:
        self._embedding.cache = cache

    @property
    def chunking(self) -> Chunking:
        """How content is cut (``Embedding.chunking``)."""
        return self._embedding.chunking

    # Searching (use_cases/searching.py) and answering (use_cases/answers.py)
    def search(self, workspace_id: str, request: SearchRequest, request_id: str) -> SearchResponse:
        return self._searching.search(workspace_id, request, request_id)

    def facets(self, workspace_id: str, filters: SearchFilters | None, limit: int, request_id: str) -> FacetsResponse:
        return self._searching.facets(workspace_id, filters, limit, request_id)

    def answer(self, workspace_id: str, request: AnswerRequest, request_id: str) -> AnswerResponse:
        return self._answers.answer(workspace_id, request, request_id)

    # Writing (use_cases/writing.py, embedding.py, chat_turns.py), promotion, reading, deletion
    def ingest(
        self, workspace_id: str, observations: Sequence[ObservationIn], request_id: str, caller: Caller = OPERATOR
    ) -> ObservationsResponse:
        return self._writing.ingest(workspace_id, observations, request_id, caller)

    def index(
        self,
        workspace_id: str,
        observations: Sequence[ObservationIn],
        caller: Caller = OPERATOR,
        request_id: str | None = None,
    ) -> UpsertOutcome:
        return self._writing.index(workspace_id, observations, caller, request_id)

    # What the bus delivered (use_cases/queued_events.py; loaded on first use: the ingest function's)
    def index_events(self, records: Sequence[dict[str, Any]]) -> set[str]:
        return self._queued_events().index_together(records)

    def index_event(self, body: str, message_id: str | None = None) -> None:
        self._queued_events().index_one(body, message_id)

    def _queued_events(self) -> QueuedEvents:
        from neural_memory.use_cases.queued_events import QueuedEvents

        return QueuedEvents(self._writing, self.settings)

    def embed_chunks(
        self, workspace_id: str, items: Sequence[IndexedObservation], cache: VectorCache | None = None
    ) -> None:
        self._embedding.embed_chunks(workspace_id, items, cache)

    def embed_documents(
        self, workspace_id: str, texts: Sequence[str], cache: VectorCache | None = None
    ) -> list[Vector]:
        return self._embedding.embed_documents(workspace_id, texts, cache)

    def earlier_turn(self, workspace_id: str) -> Callable[[str, datetime], ObservationRecord | None]:
        return self._turns.earlier_turn(workspace_id)

    def recut_turns_quoting(self, workspace_id: str, deleted: Sequence[ObservationRecord]) -> None:
        self._turns.recut_turns_quoting(workspace_id, deleted)

    def promote(
        self, workspace_id: str, observation_id: str, reason: str, by: str, request_id: str, caller: Caller = OPERATOR
    ) -> ObservationOut:
        return self._promotion.promote(workspace_id, stored_id(observation_id), reason, by, request_id, caller)

    def get(self, workspace_id: str, observation_id: str, request_id: str) -> ObservationOut:
        return read_observation(self.store, workspace_id, stored_id(observation_id), request_id)

    def delete(
        self, workspace_id: str, observation_id: str, request_id: str, caller: Caller = OPERATOR
    ) -> DeleteResponse:
        now = self._clock()
        observation_id = stored_id(observation_id)  # an id sent with a secret in it is stored under its derived id
        return delete_observation(
            self.store, self._turns, self.settings, now, workspace_id, observation_id, request_id, caller, self.audit
        )

    # The audit trail (use_cases/auditing.py)
    def audit_trail(
        self, workspace_id: str, query: AuditQuery, request_id: str, caller: Caller = OPERATOR
    ) -> AuditResponse:
        return auditing.audit_trail(self.audit, workspace_id, query, request_id, caller)

    # The engineering views (use_cases/experts.py, lineage.py)
    def experts(self, workspace_id: str, request: ExpertsRequest, request_id: str) -> ExpertsResponse:
        return find_experts(self._pipeline, self.store, self.settings, self._clock(), workspace_id, request, request_id)

    def lineage(self, workspace_id: str, observation_id: str, limit: int, request_id: str) -> LineageResponse:
        return lineage.lineage(
            self.store, self.settings, self._clock(), workspace_id, stored_id(observation_id), limit, request_id
        )

    # Upkeep (use_cases/upkeep.py, scrubbing.py)
    def maintain(self, now: datetime, caller: Caller = OPERATOR) -> dict[str, int]:
        return self._upkeep.maintain(now, caller)

    def purge_expired(self, now: datetime, caller: Caller = OPERATOR) -> int:
        return self._upkeep.purge_expired(now, caller)

    def archive_execution(self, now: datetime) -> int:
        return self._upkeep.archive_execution(now)

    def unembed_due(self, now: datetime) -> int:
        return self._upkeep.unembed_due(now)

    def ensure_index(self, *, deadline: float | None = None) -> str:
        """The deploy's and the reindex schedule's index step (``stores/opensearch/reindex.bootstrap``)."""
        from neural_memory.stores.opensearch.reindex import bootstrap

        return bootstrap(self, deadline=deadline)

    def scrub(
        self,
        cursor: ScrubCursor | None = None,
        *,
        deadline: float | None = None,
        progress: Callable[[ScrubReport], None] | None = None,
        only: str | None = None,
    ) -> ScrubReport:
        return self._scrub().run(cursor, deadline=deadline, progress=progress, only=only)

    def scrub_workspaces(self) -> dict[str, int]:
        return self._scrub().workspaces()

    def _scrub(self) -> Scrub:
        from neural_memory.use_cases.scrubbing import Scrub  # the maintenance function's and the CLI's only

        return Scrub(self.store, self._embedding, self._turns, self.settings, self._clock)

    def visible_after(self, now: datetime) -> datetime:
        """What a read at ``now`` passes as ``live_at`` (``tiers.visible_after``)."""
        return visible_after(now, self.settings.collaborative_after_window)

    def close(self) -> None:
        """Close the store's and the embedding cache's connections (the embedded store saves its
        in-memory index; the last process out checkpoints the WAL). Before its files go away."""
        for part in (self.store, self.embedding_cache, self.audit):
            if (close := getattr(part, "close", None)) is not None:
                close()


def build_service(settings: Settings, clock: Callable[[], datetime] = utcnow) -> Service:
    """A service with the store and providers that ``settings`` name (``wiring.chosen_providers``:
    nothing loads until first use); ``clock`` is its time (an evaluation over dated data sets it to
    the data's own "now")."""
    from neural_memory.wiring import chosen_providers

    p = chosen_providers(settings)
    return Service(p.store, p.embedder, settings, clock, p.cache, p.scorer, p.reranker, p.answerer, p.proposer)


_service: Service | None = None


def get_service() -> Service:
    """The process-wide service, built from ``get_settings()`` on first call."""
    global _service  # noqa: PLW0603 - one service per process, like Powertools' singletons
    if _service is None:
        from neural_memory.settings import get_settings

        _service = build_service(get_settings())
    return _service


def current_settings() -> Settings:
    """The installed service's settings, else ``get_settings()``: for handlers that need no store
    (the webhook receivers), so they never build one."""
    if _service is not None:
        return _service.settings
    from neural_memory.settings import get_settings

    return get_settings()


def set_service(service: Service | None) -> None:
    """Install the service the handlers use (the local server and tests build their own)."""
    global _service  # noqa: PLW0603
    _service = service
