"""Two observations of one batch with the same id (given, or derived from the same source event).

``POST /v1/observations`` refuses such a request (``repeated``: a 400 naming the later one's
field): its reply lists one id per observation sent, in order, and a client that sent two different
documents under one id has a bug it should hear about. Files, failure reports and the ingest queue
carry deliveries, where the same event twice is a redelivery: there the batch is read as if each
observation were sent in turn (``last_of_each``): the last copy of an id is stored, and each earlier
copy counts as an update it replaced, so created + updated is the number of observations read
whatever the batch size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.errors import InvalidInput
from neural_memory.ingest.prepare import observation_id

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import ObservationIn


def repeated(observations: Sequence[ObservationIn]) -> InvalidInput | None:
    """The 400 for the first observation whose id an earlier one of the request has, or None."""
    first_at: dict[str, int] = {}
    for n, observation in enumerate(observations):
        key = observation_id(observation)
        m = first_at.setdefault(key, n)
        if m == n:
            continue
        if observation.id:
            return InvalidInput(
                f"observations.{n}.id", f"repeats the id of observations.{m} ({key!r}): send each id once per request"
            )
        return InvalidInput(
            f"observations.{n}",
            f"is the same source event as observations.{m} (both derive the id {key!r}): send it once",
        )
    return None


def last_of_each(observations: Sequence[ObservationIn]) -> tuple[list[ObservationIn], list[str]]:
    """The observations with only the last copy of each id, at its place; and the id of every
    earlier copy dropped (one entry per copy), each an update the last one made."""
    last_at = {observation_id(o): n for n, o in enumerate(observations)}
    kept: list[ObservationIn] = []
    replaced: list[str] = []
    for n, observation in enumerate(observations):
        key = observation_id(observation)
        if last_at[key] == n:
            kept.append(observation)
        else:
            replaced.append(key)
    return kept, replaced
