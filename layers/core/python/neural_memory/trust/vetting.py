"""What the server sets on every observation it stores, from what it says and who wrote it: its
``trust`` (``team``), and its ``flags`` for review (``instructions``). Never a client's word:
each write computes both again, so an edit that adds or removes instruction-like text moves the
flag with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.trust.instructions import flags_of
from neural_memory.trust.team import association_of

if TYPE_CHECKING:
    from neural_memory.models import ObservationRecord
    from neural_memory.trust.team import TeamPolicy


def vetted(record: ObservationRecord, team: TeamPolicy) -> ObservationRecord:
    """``record`` with its trust under ``team`` and its flags."""
    flags = flags_of(f"{record.title}\n{record.content}")
    trust = team.trust(association_of(record.metadata), record.actor_name)
    return record.model_copy(update={"trust": trust, "flags": flags or None})
