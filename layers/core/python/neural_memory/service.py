"""The composition root: a ``Service`` holds a store and providers and serves every use case.

Handlers, the local server, the CLI and tests all go through ``Service``; ``build_service``
chooses the providers from settings, and tests may pass their own.

One module (~510 lines) because ``Service`` is one class whose use cases share its store,
providers and clock; what they run lives in the modules they call (the search pipeline,
supersession, the tier lifecycle, expansion).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Literal

from neural_memory.answer.answering import CHANGES_LISTED, AnswerFailed, extractive_answer
from neural_memory.clock import utcnow
from neural_memory.engineering import experts as expert_ranking
from neural_memory.engineering import staleness
from neural_memory.engineering.lineage import trace
from neural_memory.engineering.staleness import code_refs_out
from neural_memory.errors import (
    ConfigurationError,
    Conflict,
    NeuralMemoryError,
    NotFound,
    PartiallyApplied,
    StoreRejected,
)
from neural_memory.ingest import lifecycle, supersession
from neural_memory.ingest.prepare import chunked, embedding_text, prepare
from neural_memory.ingest.repeated_ids import last_of_each, repeated
from neural_memory.ingest.turn_context import add_stored_turn_context, add_turn_context, previous_in_session, quoting
from neural_memory.models import (
    AnswerResponse,
    DeleteResponse,
    ExpertsResponse,
    FacetsResponse,
    Latency,
    LineageResponse,
    ObservationOut,
    ObservationsResponse,
    SearchRequest,
    SearchResponse,
    UpsertOutcome,
)
from neural_memory.models.chat_turns import CHAT_TURN_TYPES
from neural_memory.observability import (
    METRIC_ANSWER_LATENCY,
    METRIC_DEGRADED,
    METRIC_EMBEDDING_CACHE_HITS,
    METRIC_OBSERVATIONS_CREATED,
    METRIC_OBSERVATIONS_REDACTED,
    METRIC_OBSERVATIONS_UPDATED,
    METRIC_RESULTS_RETURNED,
    METRIC_SEARCH_LATENCY,
    StageTimer,
    logger,
    record_count,
    record_latency,
)
from neural_memory.providers.embeddings.fair_share import for_workspace
from neural_memory.providers.embeddings.vector_cache import embedding_hash, text_key
from neural_memory.providers.llm.base import collecting_fallbacks
from neural_memory.redaction.observations import redact_all, redactions_out
from neural_memory.search.expansion import expanded
from neural_memory.search.facets import facets_reply
from neural_memory.search.filters.model import compile_filter, filter_fields
from neural_memory.search.pipeline import SearchPipeline
from neural_memory.search.questions import read_question
from neural_memory.search.tiers import embeds, visible_after
from neural_memory.stores.base import RecordChanged, lifecycle_state, read_one
from neural_memory.stores.find import Find

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from neural_memory.answer.answering import LlmAnswerer
    from neural_memory.ingest.chunking import Chunking
    from neural_memory.models import (
        AnswerRequest,
        Citation,
        ExpertsRequest,
        ObservationIn,
        ObservationRecord,
        SearchFilters,
        Vector,
    )
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.providers.embeddings.vector_cache import VectorCache
    from neural_memory.providers.llm.gating import RelevanceScorer
    from neural_memory.providers.rerank.base import Reranker
    from neural_memory.search.filters.inference import FilterProposer
    from neural_memory.search.pipeline import SearchOutcome
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
        embedding_cache: VectorCache | None = None,
        scorer: RelevanceScorer | None = None,
        reranker: Reranker | None = None,
        answerer: LlmAnswerer | None = None,
        proposer: FilterProposer | None = None,
        local_reranker: Reranker | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.embedding_cache = embedding_cache
        self._answerer = answerer
        self._clock = clock
        self._pipeline = SearchPipeline(
            store, embedder, settings, scorer=scorer, cohere=reranker, proposer=proposer, local=local_reranker
        )

    def search(self, workspace_id: str, request: SearchRequest, request_id: str) -> SearchResponse:
        """Run the pipeline and emit its latency and result metrics."""
        with collecting_fallbacks() as fallbacks:  # an LLM provider's fallback, named in degraded
            outcome = self._pipeline.run(workspace_id, request, self._clock())
        outcome.degraded.extend(fallbacks)
        stages = outcome.latency.model_dump(by_alias=True)
        record_latency(METRIC_SEARCH_LATENCY, {k: ms for k, ms in stages.items() if k == "total" or k in outcome.ran})
        record_count(METRIC_RESULTS_RETURNED, len(outcome.results))
        if outcome.degraded:
            record_count(METRIC_DEGRADED, len(outcome.degraded))
        self._log_search(request, outcome)
        response = SearchResponse(
            request_id=request_id,
            results=outcome.results,
            latency=outcome.latency,
            llm=outcome.llm,
            rerank=outcome.rerank,
            threshold=outcome.threshold,
            degraded=outcome.degraded,
            auto_filters=outcome.auto_filters,
            question=outcome.question,
        )
        if request.expand is not None:
            return expanded(response, outcome.texts, self.settings.max_reply_bytes)
        return response

    def _log_search(self, request: SearchRequest, outcome: SearchOutcome) -> None:
        """One INFO line per search, "search complete": the time of each stage that ran and those
        over their budget, candidates after each stage, the filters' field names, whether and why
        the LLM was skipped, and what degraded (its kind only). Never the query, a filter's value
        or any content: those may be anything a user wrote."""
        stages = outcome.latency.model_dump(by_alias=True)
        timings = {k: ms for k, ms in stages.items() if k == "total" or k in outcome.ran}
        budgets = self.settings.stage_budgets_ms()
        applied = outcome.auto_filters.applied_filters if outcome.auto_filters else None
        logger.info(
            "search complete",
            extra={
                "mode": request.mode,
                "topK": request.top_k,
                "stagesMs": timings,
                "overBudget": sorted(k for k, ms in timings.items() if k in budgets and ms > budgets[k]),
                "counts": outcome.counts,
                "filterFields": filter_fields(request.filters),
                "autoFilterFields": filter_fields(applied),
                "llmSkipped": outcome.llm.bypassed,
                "llmSkipReason": outcome.llm.reason,
                "llmNotes": len(outcome.llm.notes),
                "rerank": request.rerank,
                "rerankProvider": outcome.rerank.provider,
                "degraded": [entry.split(" (", 1)[0] for entry in outcome.degraded],
            },
        )

    def answer(self, workspace_id: str, request: AnswerRequest, request_id: str) -> AnswerResponse:
        """Search, then answer from the results with citations (LLM if configured, else extractive)."""
        timer = StageTimer()
        search = SearchRequest.model_validate(
            {
                "query": request.question,
                "topK": request.top_k,
                "filters": request.filters,
                "mode": request.mode,
                "excludeSessionId": request.exclude_session_id,
                "excludeAfter": request.exclude_after,
            }
        )
        with collecting_fallbacks() as fallbacks:  # an LLM provider's fallback, named in degraded
            with timer.stage("search"):
                outcome = self._pipeline.run(workspace_id, search, self._clock())
            searched = len(fallbacks)  # the search's own, logged with it as search() does
            outcome.degraded.extend(fallbacks)
            self._log_search(search, outcome)
            texts = outcome.texts
            degraded = list(outcome.degraded)
            method: Literal["llm", "extractive"] = "extractive"
            if self._answerer is None:  # docs/api.md: an extractive answer says why in degraded
                degraded.append("answer:llm->extractive (no LLM configured)")
            elif not outcome.results:
                degraded.append("answer:llm->extractive (nothing retrieved to answer from)")
            with timer.stage("generate"):
                if self._answerer is not None and outcome.results:
                    try:
                        text, citations = self._answerer.answer(request.question, outcome.results, texts)
                        method = "llm"
                    except AnswerFailed as exc:
                        logger.warning("LLM answer failed; answering extractively", extra={"reason": str(exc)})
                        degraded.append(f"answer:llm->extractive ({exc})")
                if method == "extractive":  # sentences from the records: a PR's number is in its metadata
                    records = self.store.read(workspace_id, [r.id for r in outcome.results[:CHANGES_LISTED]])
                    text, citations = extractive_answer(request.question, outcome.results, texts, records)
        degraded.extend(fallbacks[searched:])  # the answer's
        if method == "llm" and self.settings.promote_after_citations:
            self._count_citations(workspace_id, citations, outcome, degraded)
        # The search's own stages, as a search reply has them, then the answer's.
        latency = outcome.latency.model_copy(update={"total": timer.total_ms(), "generate": timer.ms("generate")})
        record_latency(
            METRIC_ANSWER_LATENCY,
            {"total": latency.total, "search": timer.ms("search"), "generate": timer.ms("generate")},
        )
        return AnswerResponse(
            request_id=request_id,
            answer=text,
            citations=citations,
            method=method,
            latency=latency,
            llm=outcome.llm,
            degraded=degraded,
        )

    def _count_citations(
        self, workspace_id: str, citations: Sequence[Citation], outcome: SearchOutcome, degraded: list[str]
    ) -> None:
        """The automatic promotion's rule: count one more citation for each C observation an LLM
        answer cites (a verified quote: the LLM judged it useful, where an extractive answer
        quotes its top results whatever they are), and promote those cited
        ``promote_after_citations`` times. A store that refuses the count costs the answer nothing
        but a line in ``degraded``."""
        tiers = {result.id: result.tier for result in outcome.results}
        cited = sorted({c.id for c in citations if tiers.get(c.id) == "C"})
        if not cited:
            return
        try:
            counts = lifecycle.note_citations(self.store, workspace_id, cited)
            for observation_id, count in sorted(counts.items()):
                if count >= self.settings.promote_after_citations:
                    try:
                        self._promote(
                            workspace_id, observation_id, lifecycle.AUTO_PROMOTER, f"cited by {count} answers"
                        )
                    except Conflict:  # promoted (or expired) since it was retrieved
                        continue
        except NeuralMemoryError as exc:
            logger.warning("citations not counted", extra={"reason": str(exc)})
            degraded.append(f"promotion:citations not counted ({exc})")

    def _promote(self, workspace_id: str, observation_id: str, by: str, reason: str) -> ObservationRecord:
        """C -> A (``lifecycle.promotion``): ``NotFound`` or ``Conflict``, naming why. The store
        promotes only the state checked (``lifecycle.restate``'s ``expected``), so of racing promotions one
        wins and the others get the ``Conflict`` naming who promoted it."""
        record = read_one(self.store, workspace_id, observation_id)
        for _ in range(PROMOTE_ATTEMPTS):
            if record is None:
                raise NotFound(f"observation {observation_id!r} not found")
            fields = lifecycle.promotion(record, self._clock(), by=by, reason=reason)
            checked = {"tier": record.tier, "expires_at": record.expires_at, "promoted_at": record.promoted_at}
            try:
                promoted = lifecycle.restate(self.store, workspace_id, observation_id, fields, checked)
            except RecordChanged as exc:  # promoted (or re-ingested) since it was read: judge it again
                record = exc.record
                continue
            if promoted is None:  # deleted meanwhile
                raise NotFound(f"observation {observation_id!r} not found")
            logger.info("observation promoted", extra={"observationId": observation_id, "by": by})
            return promoted
        raise Conflict(f"observation {observation_id!r} kept changing while being promoted: try again")

    def promote(self, workspace_id: str, observation_id: str, reason: str, by: str, request_id: str) -> ObservationOut:
        """``POST /v1/observations/{id}/promote``: a C observation of the workspace kept for good
        (tier A, no expiry), with who (``by``) and why; ``NotFound`` or ``Conflict`` (409)."""
        return _out(self._promote(workspace_id, observation_id, by, reason), request_id)

    def facets(self, workspace_id: str, filters: SearchFilters | None, limit: int, request_id: str) -> FacetsResponse:
        """Counts per value of each filterable field of the workspace's live observations, each
        field under the other fields' filters (see ``Store.facets``), and the total under all."""
        timer = StageTimer()
        flt = compile_filter(
            filters, live_at=self.visible_after(self._clock()), exclude_session_id=None, include_archived=True
        )
        with timer.stage("retrieval"):
            counts = self.store.facets(workspace_id, flt, limit)
        latency = Latency(total=timer.total_ms(), embed=0, retrieval=timer.ms("retrieval"), llm_filter=0, rerank=0)
        return facets_reply(counts, request_id, latency)

    def experts(self, workspace_id: str, request: ExpertsRequest, request_id: str) -> ExpertsResponse:
        """Who knows about the query: the search's best ``POOL`` candidates under the filters (fused
        scores; no rerank, no LLM gate), aggregated per actor (``engineering.experts``)."""
        timer = StageTimer()
        # "who knows about websockets": the people who worked on websockets (a question's frame
        # is not what their work says).
        asked = read_question(request.query) if self.settings.read_questions else None
        search = SearchRequest.model_validate(
            {
                "query": asked.subject if asked is not None else request.query,
                "topK": expert_ranking.POOL,
                "filters": request.filters,
                "mode": request.mode,
                "rerank": "fast",
                "llmFilter": False,
                "collapseDuplicates": False,  # a duplicate is still its author's observation
            }
        )
        now = self._clock()
        with timer.stage("search"):
            outcome = self._pipeline.run(workspace_id, search, now)
        with timer.stage("retrieval"):  # who reviewed and merged, whose kind: the stored records
            records = self.store.read(workspace_id, [r.id for r in outcome.results])
            clock = expert_ranking.newest_observation(self.store, workspace_id) or now
        kinds: set[expert_ranking.ActorKind] = {"human"}
        kinds |= {"bot"} if request.include_bots else set()
        kinds |= {"agent"} if request.include_agents else set()
        ranked, candidates = expert_ranking.rank_experts(
            outcome.results,
            records,
            min(clock, now),
            request.top_k,
            request.evidence,
            kinds=frozenset(kinds),
            explain=request.explain,
        )
        return ExpertsResponse(
            request_id=request_id,
            experts=ranked,
            candidates=candidates,
            latency=outcome.latency.model_copy(update={"total": timer.total_ms()}),
            llm=outcome.llm,
            degraded=outcome.degraded,
            weights={**expert_ranking.TYPE_WEIGHTS, "default": expert_ranking.DEFAULT_WEIGHT},
            half_life_days=expert_ranking.HALF_LIFE_DAYS,
            recency_share=expert_ranking.RECENCY_SHARE,
        )

    @property
    def chunking(self) -> Chunking:
        """How content is cut: passages for the embedder and windows for BM25, or only windows,
        each searched both ways, when there is no embedder (a passage would be searched by nothing)."""
        chunking = self.settings.chunking
        if self.embedder is None:
            return replace(chunking, passage_tokens=chunking.tokens, title_passages=False)
        return chunking

    def index(self, workspace_id: str, observations: Sequence[ObservationIn]) -> UpsertOutcome:
        """Prepare, embed (one batch call) and write; the same id updates in place. Observations
        the store refuses for good are in the outcome's ``failed``; the others are stored.

        What the lifecycle gave a stored observation is carried over (``lifecycle.carried_over``)
        from a read before the write: the store writes an item only if its lifecycle state is
        still the one read (``Store.write``'s ``expected``), so a promotion, citation, archive
        or embedding made in between is never overwritten; those items are read and prepared
        again, up to ``INGEST_ATTEMPTS`` times.

        An id twice in ``observations`` (a redelivered event) is read as the copies sent in turn
        (``repeated_ids.last_of_each``): the last is written, each earlier one counts as updated."""
        now = self._clock()
        observations, replaced = last_of_each(observations)
        # Secrets out first: nothing below (store, embedder, cache, logs) sees them.
        redacted = redact_all(observations, self.settings.secrets_policy_of(workspace_id))
        prepared = [self._prepare(workspace_id, r.observation, now, r.redactions) for r in redacted]
        supersession.check_no_cycle(self.store, workspace_id, prepared)
        outcome = UpsertOutcome(ids=[item.record.id for item in prepared])
        outcome.redacted = list(dict.fromkeys(item.record.id for item in prepared if item.record.redactions))
        written: list[IndexedObservation] = []
        before: dict[str, list[str]] = {}
        recurring: list[str] = []
        pending = list(redacted)
        for attempt in range(INGEST_ATTEMPTS):
            # Prepared anew on a retry: the turn context and vectors are written into the items.
            items = (
                prepared
                if attempt == 0
                else [self._prepare(workspace_id, o.observation, now, o.redactions) for o in pending]
            )
            previous = self.store.read(workspace_id, [item.record.id for item in items])
            items = [
                lifecycle.carried_over(
                    item,
                    previous.get(item.record.id),
                    explicit_tier=o.observation.tier is not None,
                    chunking=self.chunking,
                    now=now,
                )
                for item, o in zip(items, pending, strict=True)
            ]
            recurring += self._recurring(workspace_id, items, previous, now)
            if self.embedder is not None and self.settings.turn_context:
                add_turn_context(items, partial(self._earlier_turn, workspace_id), self.settings.turn_context)
            before |= supersession.previous_links(previous)
            self.embed_chunks(workspace_id, items)
            expected = {item.record.id: lifecycle_state(previous.get(item.record.id)) for item in items}
            result = self.store.write(workspace_id, items, expected)
            outcome.created += result.created
            outcome.updated += result.updated
            outcome.failed |= result.failed
            stale = set(result.stale)
            written += [item for item in items if item.record.id not in result.failed and item.record.id not in stale]
            pending = [o for o, item in zip(pending, items, strict=True) if item.record.id in stale]
            if not pending:
                break
            logger.info("observations changed while being written; writing them again", extra={"ids": sorted(stale)})
        for item in (
            self._prepare(workspace_id, o.observation, now) for o in pending
        ):  # still racing after every attempt
            outcome.failed[item.record.id] = "changed by a concurrent promotion, citation or archive; send it again"
        outcome.updated += [i for i in replaced if i not in outcome.failed]
        try:
            supersession.relink(
                self.store, workspace_id, written, {i: links for i, links in before.items() if i not in outcome.failed}
            )
            staleness.remark(self.store, workspace_id, [item.record for item in written], self.visible_after(now))
        except Exception as exc:  # stored already: say exactly what, never a bare 500 for a write that stands
            logger.exception("supersession or staleness marks failed after a stored write")
            stored = list(dict.fromkeys(i for i in outcome.ids if i not in outcome.failed))
            raise PartiallyApplied(stored, "updating their supersession and staleness marks") from exc
        record_count(METRIC_OBSERVATIONS_CREATED, len(outcome.created))
        record_count(METRIC_OBSERVATIONS_UPDATED, len(outcome.updated))
        if outcome.redacted:
            record_count(METRIC_OBSERVATIONS_REDACTED, len(outcome.redacted))
        if recurring:
            self._embed_stored(workspace_id, list(dict.fromkeys(recurring)), now)
        return outcome

    def _prepare(
        self, workspace_id: str, observation: ObservationIn, now: datetime, redactions: Sequence[str] = ()
    ) -> IndexedObservation:
        """One observation (redacted: ``redactions`` says what was taken out) resolved and chunked
        under the service's settings (``prepare``)."""
        config = self.settings
        return prepare(
            observation,
            now=now,
            policy=config.tiers_of(workspace_id),
            ttl_days=config.collaborative_ttl_days,
            chunking=self.chunking,
            redactions=redactions,
        )

    def _recurring(
        self,
        workspace_id: str,
        items: list[IndexedObservation],
        previous: dict[str, ObservationRecord],
        now: datetime,
    ) -> list[str]:
        """Embed (in place, in ``items``) the E observations of the batch whose content now occurs
        ``embed_recurring_after`` times in the workspace, counting the stored ones and the batch;
        returns the ids of stored occurrences to embed as well (``_embed_stored``, once the batch
        is written). Nothing without an embedder, or with the setting 0."""
        needed = self.settings.embed_recurring_after
        if not needed or self.embedder is None:
            return []
        latest = {item.record.id: item.record for item in items}  # a batch may repeat an id
        batch: dict[str, set[str]] = {}
        for record in latest.values():
            if record.recurrence_key is not None:
                batch.setdefault(record.recurrence_key, set()).add(record.id)
        if not batch:
            return []

        def occurrences(key: str, stored: int) -> int:
            ids = batch[key]
            rewritten = sum(1 for i in ids if (p := previous.get(i)) is not None and p.recurrence_key == key)
            return stored - rewritten + len(ids)

        # The earlier occurrences not embedded yet are listed only for the keys that now recur.
        def recurring(key: str, stored: int) -> bool:
            return occurrences(key, stored) >= needed

        stored = lifecycle.recurrences(self.store, workspace_id, sorted(batch), RECURRENCE_BATCH, recurring)
        recurs: set[str] = set()
        earlier: list[str] = []
        for key, ids in batch.items():
            found = stored.get(key)
            if occurrences(key, found.count if found else 0) >= needed:
                recurs.add(key)
                earlier += [i for i in (found.unembedded if found else []) if i not in ids]
        for n, item in enumerate(items):
            record = item.record
            if record.recurrence_key in recurs and not embeds(record):
                items[n] = lifecycle.embedded(record, now, self.chunking)
        return earlier

    def _embed_stored(self, workspace_id: str, ids: Sequence[str], now: datetime) -> None:
        """Embed stored E observations whose content recurred: the store writes only their chunks
        (with vectors) and ``embedded_at``, and only while their content is the one embedded
        (``lifecycle.embed_stored``), so an edit, supersession or archive made meanwhile stands.
        After the batch that made them recur is stored: a failure is logged, and the next
        occurrence tries again."""
        try:
            records = self.store.read(workspace_id, ids)
            items = [lifecycle.embedded(r, now, self.chunking) for r in records.values() if not embeds(r)]
            self.embed_chunks(workspace_id, items)
            embedded = lifecycle.embed_stored(self.store, workspace_id, items)
        except NeuralMemoryError as exc:
            logger.warning("recurring observations not embedded", extra={"reason": str(exc), "count": len(ids)})
            return
        if len(embedded) < len(items):
            skipped = sorted({item.record.id for item in items} - set(embedded))
            logger.info("recurring observations changed meanwhile; not embedded", extra={"ids": skipped})

    def _earlier_turn(self, workspace_id: str, session_id: str, before: datetime) -> ObservationRecord | None:
        """The session's latest observation before ``before`` (a chat turn's context)."""
        return previous_in_session(self.store, workspace_id, session_id, before)

    def earlier_turn(self, workspace_id: str) -> Callable[[str, datetime], ObservationRecord | None]:
        """``_earlier_turn`` of one workspace: what a chat turn's context chunk is read from."""
        return partial(self._earlier_turn, workspace_id)

    def embed_chunks(
        self, workspace_id: str, items: Sequence[IndexedObservation], cache: VectorCache | None = None
    ) -> None:
        """Vectors for the embedded chunks (``Chunk.embedded``) of the embedded tiers: from the
        workspace's cache (``cache``, else the service's) when the same text was embedded before
        by the same model, else in one batch call to the embedder. Each chunk keeps the
        ``embedding_hash`` of its text, by which the OpenSearch store finds its vector again (a
        rewrite, a replay, a reindex)."""
        if self.embedder is None:
            return
        model_id = self.embedder.model_id
        now = self._clock()
        targets = [
            (item, chunk) for item in items if embeds(item.record, now) for chunk in item.chunks if chunk.embedded
        ]
        texts = [embedding_text(item.record.title, chunk.text) for item, chunk in targets]
        vectors = self.embed_documents(workspace_id, texts, cache)
        for (item, chunk), text, vector in zip(targets, texts, vectors, strict=True):
            chunk.vector = vector
            chunk.embedding_hash = embedding_hash(model_id, text)
            item.model_id = model_id

    def embed_documents(
        self, workspace_id: str, texts: Sequence[str], cache: VectorCache | None = None
    ) -> list[Vector]:
        """One document vector per text (``embedding_text``s), from the workspace's cache when the
        same text was embedded before by the same model, else in one batch call to the embedder
        (the chunks of an ingest, and the embedded store's reindex)."""
        if self.embedder is None:
            raise ConfigurationError("no embedder is configured (NM_EMBEDDER=none)")
        model_id = self.embedder.model_id
        cache = cache or self.embedding_cache
        cached = cache.get_many(model_id, workspace_id, texts) if cache else {}
        # A damaged cache entry is re-embedded, never stored as a vector of the wrong shape.
        cached = {key: vector for key, vector in cached.items() if len(vector) == self.embedder.dimension}
        missing = list(dict.fromkeys(t for t in texts if text_key(t) not in cached))
        if missing:
            with for_workspace(workspace_id):  # queued as this workspace's (fair_share)
                fresh = self.embedder.embed(missing, "search_document")
            if cache:
                cache.put_many(model_id, workspace_id, list(zip(missing, fresh, strict=True)))
            cached.update((text_key(t), v) for t, v in zip(missing, fresh, strict=True))
        record_count(METRIC_EMBEDDING_CACHE_HITS, len(texts) - len(missing))
        return [cached[text_key(text)] for text in texts]

    def ingest(self, workspace_id: str, observations: Sequence[ObservationIn], request_id: str) -> ObservationsResponse:
        """``POST /v1/observations``: ids in request order, and how many were created or updated;
        ``StoreRejected`` (422, naming each refused id and why) if the store refused any; an id
        sent twice is a 400 naming the later one (``repeated_ids.repeated``), before anything is written."""
        if (problem := repeated(observations)) is not None:
            raise problem
        outcome = self.index(workspace_id, observations)
        if outcome.failed:
            raise StoreRejected.of(outcome.failed, len(outcome.ids))
        return ObservationsResponse(
            ids=list(dict.fromkeys(outcome.ids)),
            created=len(outcome.created),
            updated=len(outcome.updated),
            redacted=len(outcome.redacted),
            request_id=request_id,
        )

    def get(self, workspace_id: str, observation_id: str, request_id: str) -> ObservationOut:
        """One observation of the workspace, or ``NotFound``."""
        record = read_one(self.store, workspace_id, observation_id)
        if record is None:
            raise NotFound(f"observation {observation_id!r} not found")
        return _out(record, request_id)

    def lineage(self, workspace_id: str, observation_id: str, limit: int, request_id: str) -> LineageResponse:
        """Why the observation changed: its supersession chain both ways and the observations
        sharing an engineering key with it, oldest first (``engineering.lineage``); ``NotFound``
        if it is not in the workspace (or expired)."""
        now = self._clock()
        record = read_one(self.store, workspace_id, observation_id)
        visible = self.visible_after(now)
        if record is None or (record.expires_at is not None and record.expires_at <= visible):
            raise NotFound(f"observation {observation_id!r} not found")
        timeline, truncated = trace(self.store, workspace_id, record, visible, limit)
        return LineageResponse(request_id=request_id, id=record.id, timeline=timeline, truncated=truncated)

    def delete(self, workspace_id: str, observation_id: str, request_id: str) -> DeleteResponse:
        """Delete one observation of the workspace with its chunks, or ``NotFound``; what it
        superseded is current again."""
        record = read_one(self.store, workspace_id, observation_id)
        if record is None or not self.store.delete(workspace_id, observation_id):
            raise NotFound(f"observation {observation_id!r} not found")
        supersession.unmark_deleted(self.store, workspace_id, record.supersedes or [])
        staleness.remark(self.store, workspace_id, [], self.visible_after(self._clock()), deleted=record)
        self.recut_turns_quoting(workspace_id, [record])
        return DeleteResponse(id=observation_id, deleted=True, request_id=request_id)

    def recut_turns_quoting(self, workspace_id: str, deleted: Sequence[ObservationRecord]) -> None:
        """Cut again the turns whose context chunk quoted these chat turns (deleted, or redacted by
        ``scrub``), so their old words are not found through them: each such turn once, however
        many of them it quoted (a purge deletes runs of a session's turns), written only if
        unchanged since read."""
        if not self.settings.turn_context or self.embedder is None:
            return
        now = self._clock()
        earlier = partial(self._earlier_turn, workspace_id)
        quoted = {
            t.id: t for record in deleted for t in quoting(self.store, workspace_id, record, self.settings.turn_context)
        }
        turns = list(quoted.values())
        if not turns:
            return
        items = [chunked(record, self.chunking, now) for record in turns]
        add_stored_turn_context(items, earlier, self.settings.turn_context)
        self.embed_chunks(workspace_id, items)
        self.store.write(workspace_id, items, {record.id: lifecycle_state(record) for record in turns})

    def purge_expired(self, now: datetime) -> int:
        """Delete every expired observation (all workspaces); what they superseded is current
        again, and the turns whose context quoted a purged chat turn are cut again without it.
        Returns how many went."""
        released = supersession.expiring_links(self.store, now)
        turns = self._expiring_turns(now)
        purged = lifecycle.purge_expired(self.store, now)
        for workspace_id, targets in released.items():
            supersession.unmark_deleted(self.store, workspace_id, sorted(set(targets)))
        for workspace_id, records in turns.items():
            self.recut_turns_quoting(workspace_id, records)
        return purged

    def _expiring_turns(self, now: datetime) -> dict[str, list[ObservationRecord]]:
        """By workspace, the chat turns a purge at ``now`` deletes (none read when no context
        chunk quotes them: ``turn_context`` off or nothing embedded)."""
        if not self.settings.turn_context or self.embedder is None:
            return {}
        expiring = Find(expired_at=now, observation_types=tuple(sorted(CHAT_TURN_TYPES)))
        by_workspace = self.store.count(None, expiring, by="workspace_id")
        return {ws: self.store.find(ws, expiring) for ws in sorted(by_workspace)}  # ``quoting`` skips sessionless

    def archive_execution(self, now: datetime) -> int:
        """Archive the E observations (all workspaces) that occurred ``archive_execution_after_days``
        ago or more (0: never); returns how many were archived now."""
        days = self.settings.archive_execution_after_days
        if not days:
            return 0
        return lifecycle.archive_execution(self.store, now - timedelta(days=days), now)

    def unembed_due(self, now: datetime) -> int:
        """Drop the vectors of the observations no longer embedded at ``now`` (``tiers.embeds``:
        C past its window, E archived): each is written again with lexical chunks only, if its
        lifecycle state is still the one read. Returns how many."""
        done, seen = 0, set[tuple[str, str]]()
        while due := lifecycle.vectors_due(self.store, now, UNEMBED_BATCH):
            fresh = {(workspace_id, i) for workspace_id, ids in due.items() for i in ids} - seen
            if not fresh:  # nothing written since the last round: leave the rest to the next run
                break
            seen |= fresh
            for workspace_id, ids in due.items():
                records = self.store.read(workspace_id, ids)
                items = [chunked(record, self.chunking, now) for record in records.values()]
                expected = {record.id: lifecycle_state(record) for record in records.values()}
                outcome = self.store.write(workspace_id, items, expected)
                done += len(items) - len(outcome.stale) - len(outcome.failed)
        return done

    def visible_after(self, now: datetime) -> datetime:
        """What a read at ``now`` passes as ``live_at`` (``tiers.visible_after``)."""
        return visible_after(now, self.settings.collaborative_after_window)

    def maintain(self, now: datetime) -> dict[str, int]:
        """The daily maintenance: archive old E observations; C past their window lose their
        vectors (and are deleted instead under ``collaborative_after_window = "delete"``), archived
        E lose the vectors their recurrence gave them."""
        purged = self.purge_expired(now) if self.settings.collaborative_after_window == "delete" else 0
        archived = self.archive_execution(now)
        return {"purged": purged, "archived": archived, "unembedded": self.unembed_due(now)}

    def close(self) -> None:
        """Close the store's and the embedding cache's connections (the embedded store saves its
        in-memory index; the last process out checkpoints the WAL). Before its files go away."""
        for part in (self.store, self.embedding_cache):
            if (close := getattr(part, "close", None)) is not None:
                close()


INGEST_ATTEMPTS = 4  # writes of an observation whose lifecycle state keeps changing under it
PROMOTE_ATTEMPTS = 4  # promotions of an observation re-ingested under it
UNEMBED_BATCH = 500  # observations the maintenance reads and writes again at a time
RECURRENCE_BATCH = 100  # earlier occurrences embedded by one write (more: by the next occurrences)


def _out(record: ObservationRecord, request_id: str) -> ObservationOut:
    """The wire form of a stored observation (its internal hashes left out)."""
    return ObservationOut(
        **record.model_dump(exclude={"content_hash", "recurrence_key", "code_refs", "stale_at", "redactions"}),
        code_refs=code_refs_out(record.code_refs),
        redactions=redactions_out(record.redactions),
        request_id=request_id,
    )


ANSWER_TIMEOUT_S = 10.0  # an answer writes prose: longer than a score or a filter
AUTO_FILTERS_TIMEOUT_S = 3.0  # autoFilters' call, unless NM_GATE_TIMEOUT_S is set (no budget in the design)


def build_service(settings: Settings, clock: Callable[[], datetime] = utcnow) -> Service:
    """A service with the store and providers that ``settings`` name (nothing loads until first use);
    ``clock`` is its time (an evaluation over dated data sets it to the data's own "now")."""
    from neural_memory.providers.embeddings import build_embedder
    from neural_memory.stores.factory import build_store

    store = build_store(settings)
    cache: VectorCache | None = None
    if settings.store == "sqlite":
        from neural_memory.providers.embeddings.cache import EmbeddingCache

        cache = EmbeddingCache(settings.embedding_cache_path)
    elif settings.store == "opensearch":  # the index is the cache: its chunks keep their text's hash
        from neural_memory.stores.opensearch.store import OpenSearchStore
        from neural_memory.stores.opensearch.stored_vectors import StoredVectors

        if isinstance(store, OpenSearchStore):
            cache = StoredVectors(store)
    # Keys are read (from Secrets Manager in AWS) when a provider is first used, so a function
    # reads only the secrets it needs, and an unreadable one degrades that provider with a reason.
    scorer = answerer = proposer = None
    if settings.llm_providers():
        from neural_memory.answer.answering import LlmAnswerer  # the SDKs themselves load on first call
        from neural_memory.providers.llm.factory import build_llm
        from neural_memory.providers.llm.gating import LlmScorer
        from neural_memory.search.filters.inference import LlmFilterProposer

        # The gate (and the LLM rerank) waits its budget-derived timeout; autoFilters' call comes
        # before retrieval and has no budget in the design: 3 s unless NM_GATE_TIMEOUT_S is set.
        gate = build_llm(settings, settings.gate_timeout)
        filters = build_llm(settings, settings.gate_timeout_s or AUTO_FILTERS_TIMEOUT_S)
        slow = build_llm(settings, ANSWER_TIMEOUT_S)
        if gate is not None and filters is not None and slow is not None:
            scorer = LlmScorer(gate, temperature=settings.gate_temperature)
            answerer, proposer = LlmAnswerer(slow), LlmFilterProposer(filters)
    reranker = None
    if settings.cohere_configured:
        from neural_memory.providers.rerank.cohere import CohereReranker

        reranker = CohereReranker(settings.cohere_key, model=settings.rerank_model, timeout_s=settings.rerank_timeout_s)
    return Service(
        store,
        build_embedder(settings),
        settings,
        clock=clock,
        embedding_cache=cache,
        scorer=scorer,
        reranker=reranker,
        answerer=answerer,
        proposer=proposer,
    )


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
