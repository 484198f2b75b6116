"""The facade: ``Service`` wires a store and providers to the use cases (``use_cases/``, one module
each; CONTRIBUTING "Where each use case lives") and hands each call to the one that owns it.
Handlers, the local server, the CLI and tests all go through it (``runtime.get_service``). A
method here only hands the call on: what a use case does, and its docstring, live in its module."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.auth.roles import OPERATOR
from neural_memory.clock import utcnow
from neural_memory.redaction.identifiers import stored_id
from neural_memory.search.pipeline import SearchPipeline
from neural_memory.use_cases.answers import Answers
from neural_memory.use_cases.auditing import AuditTrail
from neural_memory.use_cases.chat_turns import ChatTurns
from neural_memory.use_cases.deletion import Deletion
from neural_memory.use_cases.embedding import Embedding
from neural_memory.use_cases.finding_experts import FindingExperts
from neural_memory.use_cases.promotion import Promotion
from neural_memory.use_cases.reading import Reading
from neural_memory.use_cases.searching import Searching
from neural_memory.use_cases.tracing_lineage import TracingLineage
from neural_memory.use_cases.upkeep import Upkeep
from neural_memory.use_cases.writing import Writing

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from datetime import datetime

    from neural_memory.answer.answering import LlmAnswerer
    from neural_memory.audit.trail import AuditLog
    from neural_memory.auth.roles import Caller
    from neural_memory.domain.chunking import Chunking
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
    from neural_memory.models.audit import AuditQuery
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
        self._reading, self._audit_trail = Reading(store), AuditTrail(self.audit)
        self._deletion = Deletion(store, self._turns, settings, clock, self.audit)
        self._experts = FindingExperts(self._pipeline, store, settings, clock)
        self._lineage = TracingLineage(store, settings, clock)

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

    def promote(
        self, workspace_id: str, observation_id: str, reason: str, by: str, request_id: str, caller: Caller = OPERATOR
    ) -> ObservationOut:
        return self._promotion.promote(workspace_id, stored_id(observation_id), reason, by, request_id, caller)

    def get(self, workspace_id: str, observation_id: str, request_id: str) -> ObservationOut:
        return self._reading.read(workspace_id=workspace_id, observation_id=observation_id, request_id=request_id)

    def delete(
        self, workspace_id: str, observation_id: str, request_id: str, caller: Caller = OPERATOR
    ) -> DeleteResponse:
        delete = self._deletion.delete
        return delete(workspace_id=workspace_id, observation_id=observation_id, request_id=request_id, caller=caller)

    # The audit trail (use_cases/auditing.py)
    def audit_trail(
        self, workspace_id: str, query: AuditQuery, request_id: str, caller: Caller = OPERATOR
    ) -> AuditResponse:
        return self._audit_trail.page(workspace_id=workspace_id, query=query, request_id=request_id, caller=caller)

    # The engineering views (use_cases/finding_experts.py, tracing_lineage.py)
    def experts(self, workspace_id: str, request: ExpertsRequest, request_id: str) -> ExpertsResponse:
        return self._experts.find(workspace_id=workspace_id, request=request, request_id=request_id)

    def lineage(self, workspace_id: str, observation_id: str, limit: int, request_id: str) -> LineageResponse:
        trace = self._lineage.trace
        return trace(workspace_id=workspace_id, observation_id=observation_id, limit=limit, request_id=request_id)

    # Upkeep (use_cases/upkeep.py, scrubbing.py)
    def maintain(self, now: datetime, caller: Caller = OPERATOR) -> dict[str, int]:
        return self._upkeep.maintain(now, caller)

    def purge_expired(self, now: datetime, caller: Caller = OPERATOR) -> int:
        return self._upkeep.purge_expired(now, caller)

    def archive_execution(self, now: datetime) -> int:
        return self._upkeep.archive_execution(now)

    def ensure_index(self, *, deadline: float | None = None) -> str:
        """The deploy's and the reindex schedule's index step (``use_cases/index_bootstrap.py``)."""
        from neural_memory.use_cases.index_bootstrap import bootstrap

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

    def run_schedule(self, event: Mapping[str, Any], *, deadline: float) -> dict[str, Any]:
        from neural_memory.use_cases.schedules import run_schedule  # the maintenance function's only

        return run_schedule(self, event, deadline=deadline, now=utcnow())  # the schedule's time, not a test's clock

    def scrub_workspaces(self) -> dict[str, int]:
        return self._scrub().workspaces()

    def _scrub(self) -> Scrub:
        from neural_memory.use_cases.scrubbing import Scrub  # the maintenance function's and the CLI's only

        return Scrub(self.store, self._embedding, self._turns, self.settings, self._clock)

    def close(self) -> None:
        """Close the store's and the embedding cache's connections (the embedded store saves its
        in-memory index; the last process out checkpoints the WAL). Before its files go away."""
        for part in (self.store, self.embedding_cache, self.audit):
            if (close := getattr(part, "close", None)) is not None:
                close()
