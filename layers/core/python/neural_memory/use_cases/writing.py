"""Writing observations (``POST /v1/observations``, webhooks, imports): redact, prepare, carry the
lifecycle over, embed what recurs, add a chat turn's context, write under the state read, then
relink supersession and remark staleness."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from neural_memory import observability
from neural_memory.audit.trail import entry
from neural_memory.auth.roles import OPERATOR, require_owner
from neural_memory.domain.record_rules import lifecycle_state
from neural_memory.domain.tiers import embeds, visible_after
from neural_memory.engineering import staleness
from neural_memory.errors import NeuralMemoryError, PartiallyApplied, StoreRejected
from neural_memory.ingest import lifecycle, supersession
from neural_memory.ingest.prepare import prepare
from neural_memory.ingest.repeated_ids import last_of_each, repeated
from neural_memory.ingest.turn_context import add_turn_context
from neural_memory.models import ObservationsResponse, UpsertOutcome
from neural_memory.observability import logger, record_count
from neural_memory.providers.embeddings.fair_share import write_priority
from neural_memory.redaction.observations import redact_all
from neural_memory.trust.vetting import vetted

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from neural_memory.audit.trail import AuditLog
    from neural_memory.auth.roles import Caller
    from neural_memory.models import ObservationIn, ObservationRecord
    from neural_memory.providers.embeddings.fair_share import Priority
    from neural_memory.redaction.observations import Redacted
    from neural_memory.settings import Settings
    from neural_memory.stores.base import IndexedObservation, Store
    from neural_memory.use_cases.chat_turns import ChatTurns
    from neural_memory.use_cases.embedding import Embedding

INGEST_ATTEMPTS = 4  # writes of an observation whose lifecycle state keeps changing under it
RECURRENCE_BATCH = 100  # earlier occurrences embedded by one write (more: by the next occurrences)


@dataclass(frozen=True)
class Writing:
    """Writes observations to one store, embedded as ``embedding`` says, with their turns' context."""

    store: Store
    embedding: Embedding
    turns: ChatTurns
    settings: Settings
    clock: Callable[[], datetime]
    audit: AuditLog | None = None

    def ingest(
        self,
        workspace_id: str,
        observations: Sequence[ObservationIn],
        request_id: str,
        caller: Caller = OPERATOR,
    ) -> ObservationsResponse:
        """``POST /v1/observations``: ids in request order, and how many were created or updated;
        ``StoreRejected`` (422, naming each refused id and why) if the store refused any; an id
        sent twice is a 400 naming the later one (``repeated_ids.repeated``), before anything is written."""
        caller.require("write", "adding observations")
        if (problem := repeated(observations)) is not None:
            raise problem
        outcome = self.index(workspace_id, observations, caller, request_id)
        if outcome.failed:
            raise StoreRejected.of(outcome.failed, len(outcome.ids))
        return ObservationsResponse(
            ids=list(dict.fromkeys(outcome.ids)),
            created=len(outcome.created),
            updated=len(outcome.updated),
            redacted=len(outcome.redacted),
            request_id=request_id,
        )

    def index(
        self,
        workspace_id: str,
        observations: Sequence[ObservationIn],
        caller: Caller = OPERATOR,
        request_id: str | None = None,
    ) -> UpsertOutcome:
        """Prepare, embed (one batch call) and write; the same id updates in place. Observations
        the store refuses for good are in the outcome's ``failed``; the others are stored.

        ``caller`` writes: a new observation's ``createdBy`` is its name (a stored one keeps who
        wrote it first); a ``write`` caller may change only what it wrote (``Forbidden`` before
        anything is written), an ``admin`` anything. What was created and changed goes to the
        audit trail before this returns.

        What the lifecycle gave a stored observation is carried over (``lifecycle.carried_over``)
        from a read before the write: the store writes an item only if its lifecycle state is
        still the one read (``Store.write``'s ``expected``), so a promotion, citation, archive
        or embedding made in between is never overwritten; those items are read and prepared
        again, up to ``INGEST_ATTEMPTS`` times.

        An id twice in ``observations`` (a redelivered event) is read as the copies sent in turn
        (``repeated_ids.last_of_each``): the last is written, each earlier one counts as updated."""
        now = self.clock()
        priority = write_priority(len(observations))  # a single write or a hook's turn first (fair_share)
        observations, replaced = last_of_each(observations)
        # Secrets out first: nothing below (store, embedder, cache, logs) sees them.
        pending = redact_all(observations, self.settings.secrets_policy_of(workspace_id))
        prepared = [self.prepare(workspace_id, r.observation, now, r.redactions) for r in pending]
        supersession.check_no_cycle(self.store, workspace_id, prepared)
        outcome = UpsertOutcome(ids=[item.record.id for item in prepared])
        outcome.redacted = list(dict.fromkeys(item.record.id for item in prepared if item.record.redactions))
        done = _Written()
        for attempt in range(INGEST_ATTEMPTS):
            # Prepared anew on a retry: the turn context and vectors are written into the items.
            items = (
                prepared
                if attempt == 0
                else [self.prepare(workspace_id, o.observation, now, o.redactions) for o in pending]
            )
            stale = self._write_once(workspace_id, items, pending, caller, now, priority, outcome, done)
            pending = [o for o, item in zip(pending, items, strict=True) if item.record.id in stale]
            if not pending:
                break
            logger.info("observations changed while being written; writing them again", extra={"ids": sorted(stale)})
        for item in (self.prepare(workspace_id, o.observation, now) for o in pending):  # racing after every attempt
            outcome.failed[item.record.id] = "changed by a concurrent promotion, citation or archive; send it again"
        outcome.updated += [i for i in replaced if i not in outcome.failed]
        self._relink_and_remark(workspace_id, done, outcome, now)
        _counted(outcome)
        self._audit(workspace_id, outcome, caller, request_id, now)
        if done.recurring:
            self._embed_stored(workspace_id, list(dict.fromkeys(done.recurring)), now)
        return outcome

    def _write_once(
        self,
        workspace_id: str,
        items: list[IndexedObservation],
        pending: Sequence[Redacted],
        caller: Caller,
        now: datetime,
        priority: Priority,
        outcome: UpsertOutcome,
        done: _Written,
    ) -> set[str]:
        """One attempt: read what is stored, check the caller may change it, carry its lifecycle
        over, embed what recurs, add the turns' context, embed, and write under the state read.
        What was written goes to ``outcome`` and ``done``; returns the ids the store found changed."""
        previous = self.store.read(workspace_id, [item.record.id for item in items])
        require_owner(caller, workspace_id, [(i, p.created_by) for i, p in previous.items()], "changing")
        items = [_written_by(item, previous.get(item.record.id), caller) for item in items]
        items = [
            lifecycle.carried_over(
                item,
                previous.get(item.record.id),
                explicit_tier=o.observation.tier is not None,
                chunking=self.embedding.chunking,
                now=now,
            )
            for item, o in zip(items, pending, strict=True)
        ]
        done.recurring += self._recurring(workspace_id, items, previous, now)
        if self.embedding.embedder is not None and self.settings.turn_context:
            add_turn_context(items, self.turns.earlier_turn(workspace_id), self.settings.turn_context)
        done.before |= supersession.previous_links(previous)
        self.embedding.embed_chunks(workspace_id, items, priority=priority)
        expected = {item.record.id: lifecycle_state(previous.get(item.record.id)) for item in items}
        result = self.store.write(workspace_id, items, expected)
        outcome.created += result.created
        outcome.updated += result.updated
        outcome.failed |= result.failed
        stale = set(result.stale)
        done.written += [item for item in items if item.record.id not in result.failed and item.record.id not in stale]
        return stale

    def _relink_and_remark(self, workspace_id: str, done: _Written, outcome: UpsertOutcome, now: datetime) -> None:
        """After the write: what the written observations supersede (and no longer supersede) is
        relinked, and the claims naming what they touch are judged again."""
        links = {i: links for i, links in done.before.items() if i not in outcome.failed}
        try:
            supersession.relink(self.store, workspace_id, done.written, links)
            visible = visible_after(now, self.settings.collaborative_after_window)
            staleness.remark(self.store, workspace_id, [item.record for item in done.written], visible)
        except Exception as exc:  # stored already: say exactly what, never a bare 500 for a write that stands
            logger.exception("supersession or staleness marks failed after a stored write")
            stored = list(dict.fromkeys(i for i in outcome.ids if i not in outcome.failed))
            raise PartiallyApplied(stored, "updating their supersession and staleness marks") from exc

    def _audit(
        self, workspace_id: str, outcome: UpsertOutcome, caller: Caller, request_id: str | None, now: datetime
    ) -> None:
        """What this write created and changed, in the audit trail (before it is acknowledged)."""
        if self.audit is None:
            return
        created = [i for i in dict.fromkeys(outcome.created) if i not in outcome.failed]
        changed = [i for i in dict.fromkeys(outcome.updated) if i not in outcome.failed and i not in created]
        entries = [entry(caller.name, "write", created, request_id=request_id)] if created else []
        if changed:
            entries.append(entry(caller.name, "change", changed, request_id=request_id))
        self.audit.record(workspace_id, entries)

    def prepare(
        self, workspace_id: str, observation: ObservationIn, now: datetime, redactions: Sequence[str] = ()
    ) -> IndexedObservation:
        """One observation (redacted: ``redactions`` says what was taken out) resolved and chunked
        under the service's settings (``prepare``)."""
        config = self.settings
        item = prepare(
            observation,
            now=now,
            policy=config.tiers_of(workspace_id),
            ttl_days=config.collaborative_ttl_days,
            chunking=self.embedding.chunking,
            redactions=redactions,
        )
        return item.model_copy(update={"record": vetted(item.record, config.team_of(workspace_id))})

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
        if not needed or self.embedding.embedder is None:
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
                items[n] = lifecycle.embedded(record, now, self.embedding.chunking)
        return earlier

    def _embed_stored(self, workspace_id: str, ids: Sequence[str], now: datetime) -> None:
        """Embed stored E observations whose content recurred: the store writes only their chunks
        (with vectors) and ``embedded_at``, and only while their content is the one embedded
        (``lifecycle.embed_stored``), so an edit, supersession or archive made meanwhile stands.
        After the batch that made them recur is stored: a failure is logged, and the next
        occurrence tries again."""
        try:
            records = self.store.read(workspace_id, ids)
            items = [lifecycle.embedded(r, now, self.embedding.chunking) for r in records.values() if not embeds(r)]
            self.embedding.embed_chunks(workspace_id, items)
            embedded = lifecycle.embed_stored(self.store, workspace_id, items)
        except NeuralMemoryError as exc:
            logger.warning("recurring observations not embedded", extra={"reason": str(exc), "count": len(ids)})
            return
        if len(embedded) < len(items):
            skipped = sorted({item.record.id for item in items} - set(embedded))
            logger.info("recurring observations changed meanwhile; not embedded", extra={"ids": skipped})


def _written_by(item: IndexedObservation, previous: ObservationRecord | None, caller: Caller) -> IndexedObservation:
    """``item`` attributed: to whoever wrote ``previous`` first (kept as stored, even none), else to ``caller``."""
    created_by = previous.created_by if previous is not None else caller.name
    return item.model_copy(update={"record": item.record.model_copy(update={"created_by": created_by})})


@dataclass
class _Written:
    """What the attempts of one write have done: the items written, the supersession links the
    stored versions had, and the stored occurrences that now recur (embedded after the write)."""

    written: list[IndexedObservation] = field(default_factory=list)
    before: dict[str, list[str]] = field(default_factory=dict)
    recurring: list[str] = field(default_factory=list)


def _counted(outcome: UpsertOutcome) -> None:
    record_count(observability.METRIC_OBSERVATIONS_CREATED, len(outcome.created))
    record_count(observability.METRIC_OBSERVATIONS_UPDATED, len(outcome.updated))
    if outcome.redacted:
        record_count(observability.METRIC_OBSERVATIONS_REDACTED, len(outcome.redacted))
