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

Each move is written here once, over the store port's primitives (CONTRIBUTING.md, "Stores: the
port"): ``restate`` and ``note_citations`` patch over the values read, ``recurrences`` counts and
finds, ``embed_stored`` writes over the record read, and the daily maintenance (``archive_execution``,
``vectors_due``, ``purge_expired``) counts which workspaces have work, then patches, finds or
deletes by a ``Find`` in each.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from neural_memory.domain.ids import recurrence_key
from neural_memory.domain.record_rules import LIFECYCLE_FIELDS, lifecycle_state
from neural_memory.domain.tiers import embeds
from neural_memory.errors import Conflict
from neural_memory.ingest.normalizers.github_import import IMPORTED_FACTS, IMPORTED_TEXT
from neural_memory.ingest.prepare import chunked
from neural_memory.models import DomainModel
from neural_memory.observability import logger
from neural_memory.stores.base import IndexedObservation, RecordChanged, read_one
from neural_memory.stores.find import Find, Matching

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from datetime import datetime

    from neural_memory.domain.chunking import Chunking
    from neural_memory.models import ObservationRecord
    from neural_memory.stores.base import Store

AUTO_PROMOTER = "auto:answers"


def promotion(record: ObservationRecord, now: datetime, *, by: str, reason: str) -> dict[str, object]:
    """The fields a promotion of ``record`` sets (``restate``): tier A, no expiry, who and
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


# Conditional writes of one citation count before giving up on it (each loss means another answer
# counted meanwhile: the next read sees its count).
CITATION_ATTEMPTS = 8


class Recurrence(DomainModel):
    """How many observations of a workspace hold one recurrence key, and the ids of those of them
    not embedded yet (at most the ``limit`` asked for, the earliest first)."""

    count: int
    unembedded: list[str]


def restate(
    store: Store,
    workspace_id: str,
    observation_id: str,
    fields: Mapping[str, object],
    expected: Mapping[str, object] | None = None,
) -> ObservationRecord | None:
    """Set these ``LIFECYCLE_FIELDS`` of the observation in place, on every chunk (a promotion);
    the record as it now stands, or None if it is not in this workspace. With ``expected``
    (field -> value), only if the stored record still holds those values (checked by the store
    as one step with the write), else ``RecordChanged`` with the record as it is."""
    if not fields or not set(fields) <= LIFECYCLE_FIELDS:
        raise ValueError(f"restate sets only {sorted(LIFECYCLE_FIELDS)}, not {sorted(set(fields))}")
    patched = store.patch(workspace_id, {observation_id: fields}, {observation_id: expected} if expected else None)
    if observation_id in patched.changed:
        raise RecordChanged(patched.changed[observation_id])
    if observation_id not in patched.ids:
        return None
    return read_one(store, workspace_id, observation_id)


def note_citations(store: Store, workspace_id: str, observation_ids: Sequence[str]) -> dict[str, int]:
    """Count one more answer citing each of these observations; their counts now, by id (absent
    ids are skipped). Each count is written only over the count read (``patch``'s ``expected``),
    read again and retried when another answer counted meanwhile: two answers citing at once
    count twice, on every store."""
    pending = store.read(workspace_id, observation_ids)
    counts: dict[str, int] = {}
    for _ in range(CITATION_ATTEMPTS):
        if not pending:
            return counts
        patched = store.patch(
            workspace_id,
            {i: {"citations": (record.citations or 0) + 1} for i, record in pending.items()},
            {i: {"citations": record.citations} for i, record in pending.items()},
        )
        counts |= {i: (pending[i].citations or 0) + 1 for i in patched.ids}
        pending = patched.changed
    logger.warning("citations not counted: counted by others all along", extra={"ids": sorted(pending)})
    return counts


def recurrences(
    store: Store,
    workspace_id: str,
    keys: Sequence[str],
    limit: int,
    listed: Callable[[str, int], bool] | None = None,
) -> dict[str, Recurrence]:
    """For each of ``keys`` that stored observations hold as ``recurrence_key``, how many do
    (one count by key) and the earliest ``limit`` of them not embedded yet, of the keys
    ``listed`` (key, count) says (None: every key; one find each)."""
    # On an ingest batch's path: measured against the two statements the embedded store ran for
    # all keys at once (a count by key, then a window of each key's earliest unembedded), kept in
    # ``bench.find_paths``: 100 keys, every one recurring (a find each), 100,000 E records of ten
    # occurrences each: 11.4 ms a batch over the port, 148.9 ms the old window statement (20,000
    # records: 3.8 against 34.0 ms).
    wanted = tuple(dict.fromkeys(keys))
    if not wanted:
        return {}
    counts = store.count(workspace_id, Find(recurrence_keys=wanted), by="recurrence_key")
    found = {key: Recurrence(count=count, unembedded=[]) for key, count in counts.items()}
    for key, recurrence in found.items():
        if listed is None or listed(key, recurrence.count):
            unembedded = Find(recurrence_keys=(key,), embedded=False, limit=limit)
            recurrence.unembedded = [record.id for record in store.find(workspace_id, unembedded)]
    return found


def archive_execution(store: Store, occurred_before: datetime, now: datetime) -> int:
    """Mark ``archived_at = now`` on every E observation (of every workspace) that occurred at or
    before ``occurred_before`` and is not archived yet; returns how many. One count by workspace
    finds where there is work, then one patch by a ``Find`` per workspace."""
    old = Find(tiers=("E",), archived=False, occurred_by=occurred_before)
    workspaces = store.count(None, old, by="workspace_id")
    return sum(len(store.patch(ws, Matching(old, {"archived_at": now})).ids) for ws in sorted(workspaces))


def vectors_due(store: Store, now: datetime, limit: int) -> dict[str, list[str]]:
    """By workspace, the ids of observations (of every workspace, at most ``limit``) whose chunks
    still hold vectors they no longer should at ``now`` (``tiers.embeds``): C whose window ended
    at or before ``now``, and archived E."""
    due: dict[str, list[str]] = {}
    named = 0
    for query in (
        Find(tiers=("C",), expired_at=now, holding_vectors=True),
        Find(tiers=("E",), archived=True, holding_vectors=True),
    ):
        for ws in sorted(store.count(None, query, by="workspace_id")):
            if named >= limit:
                return due
            ids = [record.id for record in store.find(ws, replace(query, limit=limit - named))]
            due.setdefault(ws, []).extend(ids)
            named += len(ids)
    return due


def purge_expired(store: Store, now: datetime) -> int:
    """Delete every observation (of every workspace) that expired at or before ``now``, with its
    chunks; returns how many. Queries already hide them: this reclaims the space."""
    return sum(purge_expired_by_workspace(store, now).values())


def purge_expired_by_workspace(store: Store, now: datetime) -> dict[str, int]:
    """``purge_expired``, how many by workspace (each workspace's audit trail counts its own)."""
    expired = Find(expired_at=now)
    return {ws: store.delete(ws, expired) for ws in sorted(store.count(None, expired, by="workspace_id"))}


def embed_stored(store: Store, workspace_id: str, items: Sequence[IndexedObservation]) -> list[str]:
    """Give stored observations these chunks (with vectors) and ``embedded_at``, every other field
    as stored, only while they are not embedded yet and their ``content_hash`` is the item's:
    the records read, then written only if they still hold what was read (their lifecycle state
    and content hash: ``write``'s ``expected``), so an edit, supersession or archive made
    meanwhile stands. Returns the ids written."""
    stored = store.read(workspace_id, [item.record.id for item in items])
    kept: dict[str, IndexedObservation] = {}
    expected: dict[str, Mapping[str, object] | None] = {}
    for item in items:
        record = stored.get(item.record.id)
        if record is None or record.embedded_at is not None or record.content_hash != item.record.content_hash:
            continue
        embedded_now = record.model_copy(update={"embedded_at": item.record.embedded_at})
        kept[record.id] = IndexedObservation(record=embedded_now, chunks=item.chunks, model_id=item.model_id)
        expected[record.id] = {**(lifecycle_state(record) or {}), "content_hash": record.content_hash}
    if not kept:
        return []
    outcome = store.write(workspace_id, list(kept.values()), expected)
    lost = set(outcome.stale) | set(outcome.failed)
    return [i for i in kept if i not in lost]
