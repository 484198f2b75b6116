"""What went stale: a claim (a note, decision, design note or ADR: ``stores.base.CLAIM_TYPES``)
names the code it is about (``codeRefs``, stored as ``repository:path``; a caller sets them), and a
GitHub push names the same way the paths its commits added, modified or removed. A claim is
``possibly_stale`` when a push to the repository's default branch that occurred after it touched
one of its paths; the mark is the commit of the earliest such push (the head it pushed,
``metadata.commitSha``). Events (pushes, deployments, merged pull requests) record what happened
and are never marked. Nothing is deleted, and search leaves the marked ones out only when asked
(``filters.fresh``).

The mark is what the stored events imply, whatever the order of arrival and however often an event is
replayed: each write keeps it so, touching only what it changes. A written observation naming code
gets the mark of the earliest later push (one read of at most a page of pushes); a written push
marks the older observations naming its paths that are unmarked or marked by a push not earlier
than it (``stale_at``, stored with the mark: one already marked earlier is left unread, so pushes
arriving in time order touch each observation once); a deleted push releases those it marked,
each marked again from what remains. A mark whose push time is unknown (made before ``stale_at``)
or tied with the new push's is recomputed whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import ValidationError

from neural_memory.engineering.text_refs import ANY_REPOSITORY, MAX_PATH_CHARS, suffixes
from neural_memory.models import CodeRef
from neural_memory.stores.base import CLAIM_TYPES
from neural_memory.stores.find import Find

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from neural_memory.models import ObservationRecord
    from neural_memory.stores.base import Store

# A mark: the marking push's commit and when it occurred (``possibly_stale``, ``stale_at``).
StaleMark: TypeAlias = tuple[str, datetime]


@dataclass(frozen=True)
class Referencing:
    """Which observations naming a path ``referencing`` returns (every one by default).

    ``before``/``after``: occurred strictly before/after; ``marked_from``: not marked, or marked by
    a push that occurred at or after it (``stale_at``; a mark without one counts as such);
    ``pushes``: GitHub pushes only; ``claims``: claims only (``CLAIM_TYPES``); ``limit``: at most
    that many, the oldest."""

    before: datetime | None = None
    after: datetime | None = None
    marked_from: datetime | None = None
    pushes: bool = False
    claims: bool = False
    limit: int | None = None


def referencing(
    store: Store, workspace_id: str, refs: Sequence[str], live_at: datetime, scope: Referencing | None = None
) -> list[ObservationRecord]:
    """The observations of the workspace, live at ``live_at``, whose ``code_refs`` hold one of
    ``refs`` (``repository:path``), the oldest first (ties by id); only those ``scope`` admits."""
    if not refs:
        return []
    scope = scope or Referencing()
    types: tuple[str, ...] = ("push",) if scope.pushes else ()
    if scope.claims:
        types = tuple(t for t in CLAIM_TYPES if not types or t in types)
        if not types:
            return []
    return store.find(
        workspace_id,
        Find(
            code_refs=tuple(refs),
            live_at=live_at,
            occurred_before=scope.before,
            occurred_after=scope.after,
            marked_from=scope.marked_from,
            sources=("github",) if scope.pushes else (),
            observation_types=types,
            limit=scope.limit,
        ),
    )


def code_refs_out(keys: Sequence[str] | None) -> list[CodeRef] | None:
    """Stored code refs (``repository:path``) as the API shows them: paths grouped by repository."""
    if not keys:
        return None
    paths: dict[str, list[str]] = {}
    for key in keys:
        repository, path = key.split(":", 1)
        if repository != ANY_REPOSITORY:  # a file its text names in no repository: matched, not shown
            paths.setdefault(repository, []).append(path)
    refs = [ref for repo, found in paths.items() if (ref := _shown(repo, found)) is not None]
    return refs or None


def _shown(repository: str, paths: list[str]) -> CodeRef | None:
    """The ref as the API shows it, without what it could not take (a ref read from an earlier
    version's text: a reply never fails on one)."""
    try:
        return CodeRef.model_validate({"repository": repository, "paths": paths})
    except ValidationError:
        kept = [p for p in paths if 0 < len(p) <= MAX_PATH_CHARS]
        if len(kept) == len(paths) or not kept:
            return None  # the repository is what it refuses
        return _shown(repository, kept)


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
    deleted: ObservationRecord | None = None,
) -> None:
    """Make ``possibly_stale`` (and ``stale_at``) right after ``written`` (as stored by this write)
    were stored, or ``deleted`` was deleted (see the module's docstring)."""
    batch_pushes = [record for record in written if _marks(record)]
    changes: dict[str, StaleMark | None] = {}
    # The written observations naming code: the earliest later push, stored or in this batch (a
    # store may not show the batch to a search yet).
    for record in written:
        if record.code_refs and is_claim(record):
            mark = _earliest_later_push(store, workspace_id, record, now, batch_pushes)
            if mark != _mark_of(record):
                changes[record.id] = mark
    ids = {record.id for record in written}
    # The older observations a written push marks, and those a deleted push marked.
    for push, removed in [(p, False) for p in batch_pushes] + (
        [(deleted, True)] if deleted and _marks(deleted) else []
    ):
        scope = Referencing(before=push.occurred_at, marked_from=push.occurred_at, claims=True)
        for holder in referencing(store, workspace_id, touched(push), now, scope):
            if holder.id in ids:
                continue
            decided = _holder_mark(store, workspace_id, holder, push, removed, holder.id in changes, now, batch_pushes)
            if decided is False:
                continue
            if decided != _mark_of(holder):
                changes[holder.id] = decided
            else:
                changes.pop(holder.id, None)
    set_marks(store, workspace_id, changes)


def set_marks(store: Store, workspace_id: str, changes: Mapping[str, StaleMark | None]) -> None:
    """Set ``possibly_stale`` and ``stale_at`` of these observations (None clears both); absent
    ids are skipped."""
    store.patch(
        workspace_id,
        {
            i: {"possibly_stale": mark[0], "stale_at": mark[1]} if mark else {"possibly_stale": None, "stale_at": None}
            for i, mark in changes.items()
        },
    )


def _holder_mark(
    store: Store,
    workspace_id: str,
    holder: ObservationRecord,
    push: ObservationRecord,
    removed: bool,
    changed: bool,
    now: datetime,
    batch: Sequence[ObservationRecord],
) -> StaleMark | None | Literal[False]:
    """The mark of an older ``holder`` of ``push``'s paths once ``push`` is written (or removed),
    or False when it stays as it is. ``changed``: another push of the batch marked it already."""
    commit = pushed_commit(push) or ""
    own = holder.possibly_stale == commit and holder.stale_at == push.occurred_at
    if removed:
        if not own and holder.stale_at is not None:
            return False  # marked by another push
        return _earliest_later_push(store, workspace_id, holder, now, [])
    if own and not changed:
        return False  # marked by this push already (a replay)
    tied = holder.stale_at is not None and holder.stale_at == push.occurred_at
    unknown = holder.stale_at is None and holder.possibly_stale is not None  # marked before stale_at
    if changed or tied or unknown:  # ties are by id, and another push of the batch may be earlier
        return _earliest_later_push(store, workspace_id, holder, now, batch)
    return (commit, push.occurred_at)  # unmarked, or marked by a later push: this one is earlier


def touched(push: ObservationRecord) -> list[str]:
    """The refs a claim may name a push's paths by: each path, and each tail of it in its
    repository or in any (``text_refs.suffixes``)."""
    refs = list(push.code_refs or ())
    return refs + suffixes(refs)


def is_claim(record: ObservationRecord) -> bool:
    """An observation stating something about code, which a later change can make stale."""
    return record.observation_type in CLAIM_TYPES


def _marks(record: ObservationRecord) -> bool:
    """A push that can mark: one naming its head commit and the paths it touched, to the
    repository's default branch when the push says which that is (a feature branch changes
    nothing yet)."""
    default = record.metadata.get("defaultBranch")
    on_default = not isinstance(default, str) or record.metadata.get("branch") == default
    return is_push(record) and bool(record.code_refs) and pushed_commit(record) is not None and on_default


def _mark_of(record: ObservationRecord) -> StaleMark | None:
    if record.possibly_stale is None:
        return None
    return (record.possibly_stale, record.stale_at) if record.stale_at is not None else None


PUSH_PAGE = 20  # later pushes read at a time to find a holder's earliest that names a commit


def _earliest_later_push(
    store: Store, workspace_id: str, record: ObservationRecord, now: datetime, batch: Sequence[ObservationRecord]
) -> StaleMark | None:
    """The commit and time of the earliest push after ``record`` (ties by id) that touched one of
    its paths: the first of the stored ones (read oldest first, a page at a time, until one names
    a commit) or of ``batch``; None if there is none."""
    refs = set(record.code_refs or ())
    candidates = [p for p in batch if p.occurred_at > record.occurred_at and refs & set(touched(p))]
    after, seen = record.occurred_at, 0
    while True:
        page = referencing(
            store, workspace_id, sorted(refs), now, Referencing(after=after, pushes=True, limit=PUSH_PAGE + seen)
        )[seen:]
        found = next((p for p in page if _marks(p)), None)
        if found is not None:
            candidates.append(found)
            break
        if len(page) < PUSH_PAGE:
            break
        seen += len(page)
    if not candidates:
        return None
    best = min(candidates, key=lambda p: (p.occurred_at, p.id))
    return (pushed_commit(best) or "", best.occurred_at)
