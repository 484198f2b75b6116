"""Tier policy (seed: selective RAG): which observation types are architectural (A, kept forever),
collaborative (C, expire 7 days after they occurred) or execution (E, not embedded unless its
content recurs; the lifecycle that moves observations between them is ``ingest/lifecycle.py``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from neural_memory.models import ObservationRecord, Tier

DEFAULT_TIER: Tier = "C"
DEFAULT_POLICY: dict[str, Tier] = {
    "decision": "A",
    "design_note": "A",
    "adr": "A",
    "note": "A",
    "pull_request_opened": "C",
    "pull_request_merged": "C",
    "pull_request_closed": "C",
    "issue_opened": "C",
    "issue_closed": "C",
    "issue_comment": "C",
    "conversation_turn": "C",
    "push": "E",
    "deployment_created": "E",
    "deployment_succeeded": "E",
    "deployment_error": "E",
    "deployment_canceled": "E",
    "ci_run": "E",
    "release": "A",
}


def tier_for(observation_type: str, explicit: Tier | None, policy: Mapping[str, Tier]) -> Tier:
    """The explicit tier if given, else the policy's, else C."""
    return explicit or policy.get(observation_type, DEFAULT_TIER)


def expiry_for(tier: Tier, occurred_at: datetime, ttl_days: float) -> datetime | None:
    """C expires ``ttl_days`` after it occurred; A and E never expire."""
    if tier != "C":
        return None
    try:
        return occurred_at + timedelta(days=ttl_days)
    except OverflowError:  # occurred within the TTL of the end of year 9999: never expires in practice
        return datetime.max.replace(tzinfo=UTC)


def is_embedded(tier: Tier) -> bool:
    """E-tier observations are kept for metadata and lexical search only."""
    return tier != "E"


def embeds(record: ObservationRecord) -> bool:
    """Whether the observation's chunks are embedded: its tier's rule, or an E observation
    embedded because its content recurred (``embedded_at``)."""
    return is_embedded(record.tier) or record.embedded_at is not None
