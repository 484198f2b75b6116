"""What the domain says of a stored record: the fields the tier lifecycle and the marks set in place,
the state a conditional write checks, and which records are claims about code (and can go stale)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neural_memory.models import ObservationRecord


# The tier lifecycle's record fields, set in place (``ingest/lifecycle.restate``): no chunk's text
# or vector depends on them (a change of those is a new write).
LIFECYCLE_FIELDS = frozenset(
    {"tier", "expires_at", "promoted_at", "promoted_by", "promotion_reason", "citations", "archived_at"}
)

# The record fields ``patch`` sets: the lifecycle's and the marks (supersession, staleness). Of
# them the embedded store's in-memory mirror holds ``MIRRORED_FIELDS`` (and moves them with the
# patch); it reads the marks at search time from partial indices.
PATCHED_FIELDS = LIFECYCLE_FIELDS | {"superseded_by", "possibly_stale", "stale_at"}
MIRRORED_FIELDS = frozenset({"tier", "expires_at", "archived_at"})


# What the lifecycle operations (promote, cite, archive, embed, supersede) change on a stored record.
LIFECYCLE_STATE = ("tier", "expires_at", "promoted_at", "promoted_by", "promotion_reason", "citations",
                   "archived_at", "embedded_at", "superseded_by", "created_by")  # fmt: skip


def lifecycle_state(record: ObservationRecord | None) -> dict[str, object] | None:
    """The ``LIFECYCLE_STATE`` of a stored record (None for an absent one): an ingest that carried
    these over writes only if the store still holds them (``Store.write``'s ``expected``)."""
    if record is None:
        return None
    return {name: getattr(record, name) for name in LIFECYCLE_STATE}


# The observation types that state something about code, and so can go stale (``possibly_stale``)
# when a later push touches what they name. Events (pushes, deployments, CI runs, merged pull
# requests) record what happened: they cannot.
CLAIM_TYPES = ("adr", "decision", "design_note", "note")


def touches_code(record: ObservationRecord) -> bool:
    """Whether the record's code refs are code it changed (an event: written with every tail of
    each path, ``metadata_terms``'s ``suffixes``) rather than code it names (a claim: matched as
    named)."""
    return record.observation_type not in CLAIM_TYPES
