"""Why an observation changed (``GET /v1/observations/{id}/lineage``): its supersession chain both
ways (the versions it replaced, and those that replaced it, however far along), the
observations sharing one of its engineering keys (``link_keys``: a commit, a pull request or issue, a
deployment), and for a stale claim the change that made it stale (``staleBy``: the push its mark
names and the pull request that push landed), oldest first, each with every link that brought it in.

Expired observations are left out, as everywhere; superseded ones are kept (they are the history).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.engineering.link_keys import keys_of, shared
from neural_memory.ingest.supersession import superseders
from neural_memory.models import LineageEntry, LineageLink
from neural_memory.stores.find import Find

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from neural_memory.domain.filters import MetadataScalar
    from neural_memory.models import LinkKind, ObservationRecord
    from neural_memory.stores.base import Store

MAX_CHAIN = 100  # versions read each way: a chain longer than any real history stops here


def trace(
    store: Store, workspace_id: str, subject: ObservationRecord, now: datetime, limit: int
) -> tuple[list[LineageEntry], bool]:
    """The subject's timeline (the subject included) and whether more observations share its
    keys than ``limit``."""
    found: dict[str, ObservationRecord] = {subject.id: subject}
    links: dict[str, list[LineageLink]] = {subject.id: []}

    def add(record: ObservationRecord, kind: LinkKind, key: str) -> None:
        if record.expires_at is not None and record.expires_at <= now:
            return
        found.setdefault(record.id, record)
        link = LineageLink(kind=kind, key=key)
        if link not in links.setdefault(record.id, []):
            links[record.id].append(link)

    for record, neighbour in _older(store, workspace_id, subject):
        add(record, "supersededBy", neighbour)
    for record, neighbour in _newer(store, workspace_id, subject):
        add(record, "supersedes", neighbour)
    if subject.possibly_stale:  # what made it stale: the marking push, and the PR it landed
        marking = (("commitSha", subject.possibly_stale),)
        for record in sharing_metadata(store, workspace_id, [marking], now, MAX_CHAIN):
            if record.id != subject.id and record.observation_type in ("push", "pull_request_merged"):
                add(record, "staleBy", subject.possibly_stale)
    keys = keys_of(subject)
    groups = [group for key in keys for group in key.groups]
    # Two more than the limit: the subject itself is among them, and one more says there are more.
    related = sharing_metadata(store, workspace_id, groups, now, limit + 2)
    related = [record for record in related if record.id != subject.id]
    for record in related[:limit]:
        for kind, key in shared(keys, record):
            add(record, kind, key)
    timeline = [_entry(found[i], links[i], subject.id) for i in found if i == subject.id or links[i]]
    timeline.sort(key=lambda entry: (entry.occurred_at, entry.id))
    return timeline, len(related) > limit


def sharing_metadata(
    store: Store,
    workspace_id: str,
    groups: Sequence[Sequence[tuple[str, MetadataScalar]]],
    live_at: datetime,
    limit: int,
) -> list[ObservationRecord]:
    """The observations of the workspace, live at ``live_at`` (superseded ones included), whose
    metadata holds every (key, value) pair of at least one of ``groups`` (exactly, as metadata
    filters match); the oldest first (ties by id), at most ``limit``. Each group's first pair is
    its most selective: a store may start from it."""
    wanted = tuple(tuple(group) for group in groups if group)
    if not wanted:
        return []
    return store.find(workspace_id, Find(metadata_any=wanted, live_at=live_at, limit=limit))


def _older(store: Store, workspace_id: str, subject: ObservationRecord) -> list[tuple[ObservationRecord, str]]:
    """The versions the subject replaced, through their own ``supersedes``, each with the one that
    replaced it."""
    reached: list[tuple[ObservationRecord, str]] = []
    seen = {subject.id}
    frontier = [(target, subject.id) for target in subject.supersedes or []]
    while frontier and len(reached) < MAX_CHAIN:
        wanted = [target for target, _ in frontier if target not in seen]
        records = store.read(workspace_id, wanted)
        step: list[tuple[str, str]] = []
        for target, by in frontier:
            if target in seen or target not in records:
                continue
            seen.add(target)
            reached.append((records[target], by))
            step.extend((older, target) for older in records[target].supersedes or [])
        frontier = step
    return reached[:MAX_CHAIN]


def _newer(store: Store, workspace_id: str, subject: ObservationRecord) -> list[tuple[ObservationRecord, str]]:
    """The versions that replaced the subject, through those that replaced them, each with the
    one it replaced."""
    reached: list[tuple[ObservationRecord, str]] = []
    seen = {subject.id}
    frontier = [subject.id]
    while frontier and len(reached) < MAX_CHAIN:
        by = superseders(store, workspace_id, frontier)
        pairs = [(newer, older) for older in frontier for newer in by.get(older, []) if newer not in seen]
        records = store.read(workspace_id, [newer for newer, _ in pairs])
        frontier = []
        for newer, older in pairs:
            if newer in seen or newer not in records:
                continue
            seen.add(newer)
            reached.append((records[newer], older))
            frontier.append(newer)
    return reached[:MAX_CHAIN]


def _entry(record: ObservationRecord, links: list[LineageLink], subject_id: str) -> LineageEntry:
    return LineageEntry(
        id=record.id,
        title=record.title,
        source=record.source,
        observation_type=record.observation_type,
        actor_name=record.actor_name,
        occurred_at=record.occurred_at,
        url=record.url,
        tier=record.tier,
        superseded_by=record.superseded_by,
        subject=record.id == subject_id,
        links=links,
    )
