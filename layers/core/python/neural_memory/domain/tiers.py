"""Tier policy (seed: selective RAG): which observation types are architectural (A, embedded for
good), collaborative (C, embedded for a window of 7 days after they occurred) or execution (E, not
embedded unless its content recurs; the lifecycle that moves observations between them is
``ingest/lifecycle.py``).

The window bounds what is *embedded* (the cost), not what is *remembered*: a C observation past
its window loses its vectors and stays, keyword-searchable like an E one (``AfterWindow``
"keyword", the default), unless a deployment asks for the old rule, deletion ("delete")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Mapping

    from neural_memory.models import ObservationRecord, Tier

AfterWindow: TypeAlias = Literal["keyword", "delete"]
# The TTL condition of a filter when nothing is hidden for its age (``visible_after``): before
# every expiry a record can have.
NOTHING_EXPIRES = datetime(1, 1, 2, tzinfo=UTC)

DEFAULT_TIER: Tier = "C"
DEFAULT_POLICY: dict[str, Tier] = {
    "decision": "A",
    "design_note": "A",
    "adr": "A",
    "note": "A",
    "pull_request_opened": "C",
    # A merged pull request is what the code became and why: kept embedded (docs/benchmarks.md,
    # "Merged pull requests: tier A or C", measured on real histories).
    "pull_request_merged": "A",
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
    """C's window ends ``ttl_days`` after it occurred; A and E have none."""
    if tier != "C":
        return None
    try:
        return occurred_at + timedelta(days=ttl_days)
    except OverflowError:  # occurred within the TTL of the end of year 9999: never expires in practice
        return datetime.max.replace(tzinfo=UTC)


def is_embedded(tier: Tier) -> bool:
    """E-tier observations are kept for metadata and lexical search only."""
    return tier != "E"


def embeds(record: ObservationRecord, now: datetime | None = None) -> bool:
    """Whether the observation's chunks are embedded (at ``now``, when given): its tier's rule,
    and a C observation only within its window; an E observation embedded because its content
    recurred (``embedded_at``) until it is archived."""
    if record.tier == "E":
        return record.embedded_at is not None and record.archived_at is None
    return not (now is not None and record.expires_at is not None and record.expires_at <= now)


def visible_after(now: datetime, after_window: AfterWindow) -> datetime:
    """The ``Filter.live_at`` of a read at ``now``: expired C observations are hidden only where
    they are deleted at the end of their window; elsewhere age never hides an observation."""
    return now if after_window == "delete" else NOTHING_EXPIRES
