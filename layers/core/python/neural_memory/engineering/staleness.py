"""What went stale: an observation names the code it is about (``codeRefs``, stored as
``repository:path``; the GitHub normalizer sets them for pushes, a caller for notes), and a GitHub
push names the same way the paths its commits added, modified or removed. An observation is
``possibly_stale`` when a push that occurred after it touched one of its paths; the mark is the
commit of the earliest such push (the head it pushed, ``metadata.commitSha``). Nothing is deleted,
and search leaves the marked ones out only when asked (``filters.fresh``).

The mark is derived from what is stored, never accumulated: after every write (and delete) it is
recomputed for each observation sharing a path with what was written, so the same events give the
same marks whatever their order and however often they are replayed (a rewritten note is marked
again at once if a later push touched its code).
"""

from __future__ import annotations

import bisect
from datetime import datetime
from typing import TYPE_CHECKING

from neural_memory.models import CodeRef

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from neural_memory.models import ObservationRecord
    from neural_memory.stores.base import Store


def code_refs_out(keys: Sequence[str] | None) -> list[CodeRef] | None:
    """Stored code refs (``repository:path``) as the API shows them: paths grouped by repository."""
    if not keys:
        return None
    paths: dict[str, list[str]] = {}
    for key in keys:
        repository, path = key.split(":", 1)
        paths.setdefault(repository, []).append(path)
    return [CodeRef.model_validate({"repository": repo, "paths": found}) for repo, found in paths.items()]


def is_push(record: ObservationRecord) -> bool:
    """A GitHub push, whose code refs are the paths it touched."""
    return record.source == "github" and record.observation_type == "push"


def pushed_commit(record: ObservationRecord) -> str | None:
    """The head commit a push observation names, if any."""
    sha = record.metadata.get("commitSha") or record.metadata.get("after")
    return sha if isinstance(sha, str) and sha else None


def remark(
    store: Store,
    workspace_id: str,
    written: Sequence[ObservationRecord],
    now: datetime,
    released: Iterable[str] = (),
) -> None:
    """Make ``possibly_stale`` right for every observation sharing a path with ``written`` (as
    stored by this write) or with ``released`` (the code refs of a deleted observation)."""
    refs = {ref for record in written for ref in record.code_refs or ()} | set(released)
    if not refs:
        return
    holders = {record.id: record for record in store.referencing(workspace_id, sorted(refs), now)}
    # The records just written, as written (a store may not show them to a search yet).
    holders |= {record.id: record for record in written if record.code_refs}
    # A holder's other paths may have been touched by pushes that share none of ``refs``.
    around = {ref for record in holders.values() for ref in record.code_refs or ()} - refs
    pool = dict(holders)
    if around:
        pool |= {record.id: record for record in store.referencing(workspace_id, sorted(around), now)}
    touched = _pushes_by_path(pool.values())
    changes = {
        record.id: mark
        for record in holders.values()
        if (mark := _earliest_later_push(record, touched)) != record.possibly_stale
    }
    store.set_possibly_stale(workspace_id, changes)


Touched = dict[str, tuple[list[tuple[datetime, str]], list[str]]]


def _pushes_by_path(records: Iterable[ObservationRecord]) -> Touched:
    """For each path, the pushes that touched it in time order: their (time, id) and commits (so
    a holder's earliest later push is a binary search per path, not a scan of every push)."""
    by_path: dict[str, list[tuple[datetime, str, str]]] = {}
    for record in records:
        commit = pushed_commit(record) if is_push(record) else None
        if commit is not None:
            for ref in record.code_refs or ():
                by_path.setdefault(ref, []).append((record.occurred_at, record.id, commit))
    touched: Touched = {}
    for ref, pushes in by_path.items():
        pushes.sort()
        touched[ref] = ([(at, push_id) for at, push_id, _ in pushes], [commit for _, _, commit in pushes])
    return touched


def _earliest_later_push(record: ObservationRecord, touched: Touched) -> str | None:
    """The commit of the earliest push after ``record`` (ties by id) that touched one of its
    paths, or None."""
    best: tuple[datetime, str, str] | None = None
    for ref in record.code_refs or ():
        if ref not in touched:
            continue
        keys, commits = touched[ref]
        # The first push strictly later than the record (a push is never later than itself).
        at = bisect.bisect_left(keys, (record.occurred_at, "\U0010ffff"))
        if at < len(keys) and (best is None or keys[at] < best[:2]):
            best = (*keys[at], commits[at])
    return None if best is None else best[2]
