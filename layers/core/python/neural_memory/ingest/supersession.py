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
from neural_memory.stores.find import Find

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from neural_memory.models import ObservationRecord
    from neural_memory.stores.base import IndexedObservation, Store


def superseders(store: Store, workspace_id: str, ids: Sequence[str]) -> dict[str, list[str]]:
    """For each of ``ids`` that stored observations list in ``supersedes``, their ids, the latest
    to occur first (ties by id); ids nobody supersedes are absent."""
    if not ids:
        return {}
    wanted = set(ids)
    found: dict[str, list[str]] = {}
    for record in store.find(workspace_id, Find(supersedes_any=tuple(dict.fromkeys(ids)), newest_first=True)):
        for target in record.supersedes or ():
            if target in wanted:
                found.setdefault(target, []).append(record.id)
    return found


def check_no_cycle(store: Store, workspace_id: str, items: Sequence[IndexedObservation]) -> None:
    """Raise ``InvalidInput`` (naming ``observations.N.supersedes``) if an incoming observation
    would supersede one that already leads back to it, through this batch and the stored links.

    The walk goes up from the new observation, through those that supersede it: normally none
    do, so a long chain of versions costs one read per write, whatever its length."""
    batch = _last_copies(items)
    rewritten = set(batch)
    for n, item in enumerate(items):
        start = item.record.id
        targets = set(batch[start].supersedes or ())
        if batch[start] is not item.record or not targets:
            continue  # a later copy of the same id is the one written
        parent = {start: start}  # each reached id -> the one it supersedes on the way up
        frontier = [start]
        while frontier:
            current = frontier.pop()
            above = [i for i, record in batch.items() if current in (record.supersedes or ())]
            stored = superseders(store, workspace_id, [current]).get(current, [])
            above += [i for i in stored if i not in rewritten]  # a rewritten one's links are the batch's
            for upper in above:
                if upper in targets:
                    raise InvalidInput(
                        f"observations.{n}.supersedes", f"supersession cycle: {_chain(parent, upper, current, start)}"
                    )
                if upper not in parent:
                    parent[upper] = current
                    frontier.append(upper)


def _chain(parent: dict[str, str], upper: str, below: str, start: str) -> str:
    """``start -> upper -> ... -> start``: start supersedes upper, which leads down to start."""
    links = [start, upper, below]
    while links[-1] != start:
        links.append(parent[links[-1]])
    return " -> ".join(links)


def _last_copies(items: Sequence[IndexedObservation]) -> dict[str, ObservationRecord]:
    """The record written for each id (the last copy, when a batch repeats one)."""
    return {item.record.id: item.record for item in items}


def previous_links(stored: Mapping[str, ObservationRecord]) -> dict[str, list[str]]:
    """What each incoming observation superseded before this write, from ``stored``: their
    records as read before it (one read serves the lifecycle's carry-over too)."""
    return {observation_id: record.supersedes for observation_id, record in stored.items() if record.supersedes}


def relink(store: Store, workspace_id: str, items: Sequence[IndexedObservation], before: dict[str, list[str]]) -> None:
    """After the write, make ``superseded_by`` match the stored links for every observation the
    write touched: the written ones (written unmarked) and their old and new targets."""
    written = _last_copies(items)
    targets = {t for links in before.values() for t in links} | {
        t for record in written.values() for t in record.supersedes or ()
    }
    _remark(store, workspace_id, dict.fromkeys(written), sorted(targets - set(written)))


def unmark_deleted(store: Store, workspace_id: str, supersedes: Sequence[str]) -> None:
    """After a delete: the observations it superseded are current again, unless another one
    still supersedes them."""
    _remark(store, workspace_id, {}, supersedes)


def _remark(store: Store, workspace_id: str, marks: dict[str, str | None], stored: Sequence[str]) -> None:
    """Give each observation of ``marks`` (their marks as they stand) and of ``stored`` (marks
    read here; absent ids skipped) the latest observation that supersedes it, or none; only
    changed marks are written."""
    if stored:
        found = store.read(workspace_id, stored)
        marks = marks | {observation_id: record.superseded_by for observation_id, record in found.items()}
    if not marks:
        return
    by = superseders(store, workspace_id, sorted(marks))
    wanted = {observation_id: _latest(by, observation_id) for observation_id in marks}
    store.patch(workspace_id, {i: {"superseded_by": mark} for i, mark in wanted.items() if mark != marks[i]})


def _latest(by: dict[str, list[str]], observation_id: str) -> str | None:
    """The latest observation that supersedes ``observation_id``, if any does."""
    found = by.get(observation_id)
    return found[0] if found else None


def expiring_links(store: Store, now: datetime) -> dict[str, list[str]]:
    """By workspace, the ids superseded by observations that expired at or before ``now`` (what a
    purge at ``now`` will release): one count by workspace, then a find per workspace."""
    expiring = Find(expired_at=now, superseding=True)
    return {
        ws: [target for record in store.find(ws, expiring) for target in record.supersedes or ()]
        for ws in sorted(store.count(None, expiring, by="workspace_id"))
    }
