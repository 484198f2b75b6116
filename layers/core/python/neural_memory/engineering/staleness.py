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

from typing import TYPE_CHECKING

from neural_memory.models import CodeRef

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from datetime import datetime

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
    pushes = [record for record in pool.values() if is_push(record) and pushed_commit(record)]
    changes = {
        record.id: mark
        for record in holders.values()
        if (mark := _earliest_later_push(record, pushes)) != record.possibly_stale
    }
    store.set_possibly_stale(workspace_id, changes)


def _earliest_later_push(record: ObservationRecord, pushes: Sequence[ObservationRecord]) -> str | None:
    """The commit of the earliest push after ``record`` that touched one of its paths, or None."""
    paths = set(record.code_refs or ())
    later = [
        push
        for push in pushes
        if push.id != record.id and push.occurred_at > record.occurred_at and paths & set(push.code_refs or ())
    ]
    if not later:
        return None
    return pushed_commit(min(later, key=lambda push: (push.occurred_at, push.id)))
