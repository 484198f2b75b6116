"""Keeping the top of a result list varied: duplicate observations collapsed into the best of
them, and at most N results from one session.

Runs on the fused, ranked candidates before the relevance gate and the reranker, so neither
spends a call on a copy. Both steps keep the order of what remains.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Candidate

_WORD = re.compile(r"\w+", re.UNICODE)


def duplicate_key(candidate: Candidate) -> str:
    """Title and text reduced to their lower-cased words: the same observation re-sent under
    another id, or re-formatted, has the same key."""
    record = candidate.observation
    return " ".join(_WORD.findall(f"{record.title} {record.content}".lower()))


def collapse_duplicates(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The first (best) of each group of duplicates, listing the others' ids in ``duplicates``."""
    kept: dict[str, Candidate] = {}
    for candidate in candidates:
        key = duplicate_key(candidate)
        first = kept.get(key)
        if first is None:
            kept[key] = candidate.model_copy(update={"duplicates": []})
        else:
            first.duplicates.append(candidate.observation.id)
    return list(kept.values())


def cap_per_session(candidates: Sequence[Candidate], limit: int) -> list[Candidate]:
    """At most ``limit`` candidates of any one session, the best ones (observations without a
    session are not capped)."""
    taken: dict[str, int] = {}
    out = []
    for candidate in candidates:
        session = candidate.observation.session_id
        if session is not None:
            if taken.get(session, 0) >= limit:
                continue
            taken[session] = taken.get(session, 0) + 1
        out.append(candidate)
    return out
