"""Supersession: an observation may name the ones it replaces (``supersedes``: a newer decision, a
corrected fact). A replaced observation carries ``superseded_by`` and drops out of search unless
the request sets ``includeSuperseded``.

The link is kept on both ends: ``supersedes`` as the client sent it, ``superseded_by`` derived
here on every write, so a search filters on one indexed field. The derivation holds whatever the
order of arrival: an observation written after the one that supersedes it is marked as it is
written; rewriting the newer one without a target clears that target's mark; deleting it clears
every mark it made. Links that would form a cycle (A replaces B, which replaces A) are refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.errors import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.stores.base import IndexedObservation, Store

MAX_CHAIN = 1000  # links followed when looking for a cycle; a longer chain is refused too


def check_no_cycle(store: Store, workspace_id: str, items: Sequence[IndexedObservation]) -> None:
    """Raise ``InvalidInput`` (naming ``observations.N.supersedes``) if following ``supersedes``
    from an incoming observation, through this batch and the stored ones, leads back to it."""
    batch = {item.record.id: item.record.supersedes or [] for item in items}
    stored: dict[str, list[str]] = {}

    def targets(observation_id: str) -> list[str]:
        if observation_id in batch:
            return batch[observation_id]
        if observation_id not in stored:
            record = store.get(workspace_id, observation_id)
            stored[observation_id] = (record.supersedes or []) if record is not None else []
        return stored[observation_id]

    for n, item in enumerate(items):
        start = item.record.id
        path = {start: start}  # each reached id -> the id that reached it first
        frontier = [start]
        while frontier:
            current = frontier.pop()
            for target in targets(current):
                if target == start:
                    chain = _chain(path, current, start)
                    raise InvalidInput(f"observations.{n}.supersedes", f"supersession cycle: {chain}")
                if target not in path:
                    path[target] = current
                    frontier.append(target)
            if len(path) > MAX_CHAIN:
                raise InvalidInput(f"observations.{n}.supersedes", f"supersession chain longer than {MAX_CHAIN}")


def _chain(path: dict[str, str], last: str, start: str) -> str:
    """``start -> ... -> last -> start`` from the first-reached links."""
    links = [last]
    while links[-1] != start:
        links.append(path[links[-1]])
    return " -> ".join([*reversed(links), start])


def mark_incoming(store: Store, workspace_id: str, items: Sequence[IndexedObservation]) -> None:
    """Set ``superseded_by`` on the records about to be written: by a later observation of the
    same batch that lists them, else by a stored one (other than the batch's, whose links are
    being rewritten) that does."""
    ids = [item.record.id for item in items]
    rewritten = set(ids)
    by = {t: s for t, s in store.superseders(workspace_id, ids).items() if s not in rewritten}
    for item in items:
        for target in item.record.supersedes or ():
            by[target] = item.record.id
    for item in items:
        item.record.superseded_by = by.get(item.record.id)


def previous_links(store: Store, workspace_id: str, items: Sequence[IndexedObservation]) -> dict[str, list[str]]:
    """What each incoming observation superseded before this write (read before it is written)."""
    stored = store.get_many(workspace_id, [item.record.id for item in items])
    return {observation_id: record.supersedes for observation_id, record in stored.items() if record.supersedes}


def mark_stored(
    store: Store, workspace_id: str, items: Sequence[IndexedObservation], before: dict[str, list[str]]
) -> None:
    """After the write: mark the stored targets of the written observations, and clear the marks
    of targets a rewritten observation no longer lists (unless another one still does)."""
    written = {item.record.id: item for item in items}
    changes: dict[str, str | None] = {}
    dropped = {
        target
        for source, targets in before.items()
        for target in targets
        if target not in (written[source].record.supersedes or ()) and target not in written
    }
    if dropped:
        still = store.superseders(workspace_id, sorted(dropped))
        changes |= {target: still.get(target) for target in dropped}
    for item in items:
        for target in item.record.supersedes or ():
            if target not in written:
                changes[target] = item.record.id
    store.set_superseded_by(workspace_id, changes)


def unmark_deleted(store: Store, workspace_id: str, observation_id: str, supersedes: Sequence[str]) -> None:
    """After a delete: the observations it superseded are current again (unless another one
    still supersedes them)."""
    if not supersedes:
        return
    still = store.superseders(workspace_id, list(supersedes))
    store.set_superseded_by(workspace_id, {target: still.get(target) for target in supersedes})
