"""The tier lifecycle: observations move between tiers after they are written.

- **Promotion** (C → A): a collaborative observation that keeps proving useful is kept for good
  (tier A, no expiry), by an API key that asks (``POST /v1/observations/{id}/promote``, with a
  reason) or by the rule: cited by ``NM_PROMOTE_AFTER_CITATIONS`` LLM answers while it was C. Who
  and why stay on the record.
- **Recurrence** (E, embedded): an execution observation is lexical only, until its content has
  occurred ``NM_EMBED_RECURRING_AFTER`` times in the workspace; then it, the earlier occurrences
  and every later one are embedded (``embedded_at``). "The same content" is ``ids.recurrence_key``.
- **Archive** (E): the daily maintenance marks E observations older than
  ``NM_ARCHIVE_EXECUTION_AFTER_DAYS`` (``archived_at``) and compacts them: an archived observation
  is never embedded (the vectors its recurrence gave it go), and stays readable and searched by
  keyword like any other (``includeArchived: false`` leaves it out).
- **Window** (C): past ``NM_COLLABORATIVE_TTL_DAYS`` a C observation loses its vectors and stays
  (``tiers.embeds``); the daily maintenance drops them (``Service.unembed_due``).
- **Carry-over**: an observation written again (the same id: a redelivery, an edit) keeps what
  its lifecycle gave it. A tier the client names overrides a promotion only when the post changed
  what is indexed (``content_hash``): a replay changes nothing. Who promoted it, when and why stay
  on the record either way, so a demoted record (tier C or E with ``promoted_at``) says it was
  promoted before a changed post named its tier.
- **Concurrency**: the carry-over is read before the write; the store writes it only if the
  lifecycle state (``stores.base.lifecycle_state``) is still what was read, else the service reads again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.errors import Conflict
from neural_memory.ingest.ids import recurrence_key
from neural_memory.ingest.normalizers.github import IMPORTED_FACTS, IMPORTED_TEXT
from neural_memory.ingest.prepare import chunked
from neural_memory.search.tiers import embeds
from neural_memory.stores.base import IndexedObservation

if TYPE_CHECKING:
    from datetime import datetime

    from neural_memory.ingest.chunking import Chunking
    from neural_memory.models import ObservationRecord

AUTO_PROMOTER = "auto:answers"


def promotion(record: ObservationRecord, now: datetime, *, by: str, reason: str) -> dict[str, object]:
    """The fields a promotion of ``record`` sets (``Store.restate``): tier A, no expiry, who and
    why. ``Conflict``, naming why, for anything but a live C observation."""
    if record.tier != "C":
        held = f" (promoted by {record.promoted_by} at {record.promoted_at.isoformat()})" if record.promoted_at else ""
        raise Conflict(f"observation {record.id!r} is tier {record.tier}{held}: only C observations are promoted")
    if record.expires_at is not None and record.expires_at <= now:
        raise Conflict(f"observation {record.id!r} expired at {record.expires_at.isoformat()}: it cannot be promoted")
    return {"tier": "A", "expires_at": None, "promoted_at": now, "promoted_by": by, "promotion_reason": reason}


def with_recurrence_key(record: ObservationRecord) -> ObservationRecord:
    """``record`` with its recurrence key: an E observation written before the lifecycle has none
    (a reindex copies it with one, so its content counts as occurring)."""
    if record.tier != "E" or record.recurrence_key is not None:
        return record
    return record.model_copy(update={"recurrence_key": recurrence_key(record.title, record.content)})


def embedded(record: ObservationRecord, now: datetime, chunking: Chunking) -> IndexedObservation:
    """An E observation cut again as embedded (passages for the vectors), marked ``embedded_at``."""
    return chunked(record.model_copy(update={"embedded_at": now}), chunking)


def carried_over(
    item: IndexedObservation,
    previous: ObservationRecord | None,
    *,
    explicit_tier: bool,
    chunking: Chunking,
    now: datetime | None = None,
) -> IndexedObservation:
    """``item`` (a new write of ``previous``'s id) with what the lifecycle gave ``previous``: its
    promotion (unless the client named a tier and changed the content: a replay never demotes),
    who promoted it and why (always), its citations, its embedding while its content still
    recurs, its archive mark while it is the same old event."""
    if previous is None:
        return item
    record = item.record
    update: dict[str, object] = {}
    if previous.citations is not None:
        update["citations"] = previous.citations
    if previous.promoted_at is not None:
        update |= {
            "promoted_at": previous.promoted_at,
            "promoted_by": previous.promoted_by,
            "promotion_reason": previous.promotion_reason,
        }
        replayed = record.content_hash == previous.content_hash  # the tier is hashed too
        if previous.tier == "A" and record.tier == "C" and (replayed or not explicit_tier):
            update |= {"tier": "A", "expires_at": None}
    if record.tier == "E" and record.recurrence_key == previous.recurrence_key:
        if previous.embedded_at is not None:
            update["embedded_at"] = previous.embedded_at
        if previous.archived_at is not None and record.occurred_at == previous.occurred_at:
            update["archived_at"] = previous.archived_at
    imported = _imported(record, previous)
    update |= imported
    if not update:
        return item
    kept = record.model_copy(update=update)
    if imported or embeds(kept, now) != embeds(record, now):  # cut again: new text, or passages
        return chunked(kept, chunking, now)
    return IndexedObservation(record=kept, chunks=item.chunks, model_id=item.model_id)


def _imported(record: ObservationRecord, previous: ObservationRecord) -> dict[str, object]:
    """What an import added to ``previous`` (commits, changed paths, reviewers: ``IMPORTED_FACTS``)
    kept through a write that carries none of it (a webhook delivery of the same pull request)."""
    text = previous.metadata.get(IMPORTED_TEXT)
    if not isinstance(text, str) or IMPORTED_TEXT in record.metadata:
        return {}
    facts = {key: previous.metadata[key] for key in IMPORTED_FACTS if key in previous.metadata}
    return {
        "metadata": {**record.metadata, **facts},
        "content": f"{record.content}\n\n{text}".strip(),
        "code_refs": record.code_refs or previous.code_refs,
    }
