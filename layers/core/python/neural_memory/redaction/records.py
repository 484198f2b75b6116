"""A stored record redacted as a write would redact it (``redaction/observations``): its text,
metadata, code references and identifiers (``id``, ``parentId``, ``supersedes``, ``supersededBy``,
``sessionId``, ``actorName``, ``source``, ``sourceType``, ``observationType``, ``promotedBy``, as a
write derives them: ``redaction.identifiers``), its hashes recomputed. What ``neural-memory scrub``
writes again (``use_cases/scrubbing.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.domain.ids import recurrence_key
from neural_memory.ingest.prepare import indexed_hash
from neural_memory.redaction.identifiers import redact_identifier
from neural_memory.redaction.observations import FREE_TEXT_IDENTIFIERS, redact_fields, redact_text

if TYPE_CHECKING:
    from neural_memory.models import ObservationRecord

# A record's identifiers: by field, the name a redaction records (the wire's).
_IDENTIFIERS = {
    "id": "id", "parent_id": "parentId", "superseded_by": "supersededBy", "session_id": "sessionId",
    "actor_name": "actorName", "source": "source", "source_type": "sourceType",
    "observation_type": "observationType", "promoted_by": "promotedBy",
}  # fmt: skip


def _redact_identifiers(record: ObservationRecord, update: dict[str, object], found: list[str]) -> None:
    for name, wire in _IDENTIFIERS.items():
        value = getattr(record, name)
        if value:
            text, kinds = redact_identifier(value, slug=name not in {*FREE_TEXT_IDENTIFIERS, "promoted_by"})
            if kinds:
                update[name] = text
                found += [f"{wire}:{kind}" for kind in kinds]
    if record.supersedes:
        ids = [redact_identifier(value)[0] for value in record.supersedes]
        if ids != record.supersedes:
            update["supersedes"] = ids
            found.append("supersedes:identifier")


def redact_record(record: ObservationRecord) -> ObservationRecord | None:
    """The record with its stored text and identifiers redacted (title, content, URL, metadata,
    code refs, the promotion's reason, ``_IDENTIFIERS``), its hashes recomputed and ``redactions``
    added to; None if it held nothing."""
    found: list[str] = []
    update: dict[str, object] = {}
    _redact_identifiers(record, update, found)
    texts = {n: getattr(record, n) for n in ("title", "content", "url", "promotion_reason")}
    redact_fields(texts, record.metadata, update, found)
    if record.code_refs:
        refs = []
        for ref in record.code_refs:
            text, kinds = redact_text(ref)
            refs.append(text)
            found += [f"codeRefs:{kind}" for kind in kinds]
        if refs != record.code_refs:
            update["code_refs"] = refs
    if not found:
        return None
    redacted = record.model_copy(update=update)
    title, content, url = redacted.title, redacted.content, redacted.url
    stamps: dict[str, object] = {
        "content_hash": indexed_hash(title, content, url, redacted.tier, redacted.metadata),
        "redactions": list(dict.fromkeys([*(record.redactions or []), *found])),
    }
    if record.recurrence_key is not None:
        stamps["recurrence_key"] = recurrence_key(title, content)
    return redacted.model_copy(update=stamps)
