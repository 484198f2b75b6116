"""What went stale: a claim (a note, decision, design note or ADR: ``stores.base.CLAIM_TYPES``)
names the code it is about (``codeRefs``, stored as ``repository:path``; a caller sets them), and a
GitHub push names the same way the paths its commits added, modified or removed. A claim is
``possibly_stale`` when a push to the repository's default branch that occurred after it touched
one of its paths. The mark names the change most likely to have made it stale (the head the push
pushed, ``metadata.commitSha``): of the later pushes touching its paths, the one with the
strongest evidence (``evidence``: it deleted a file the claim names, over one whose pull request
changed code the claim names, over one whose words name that code, over a mere touch), the
earliest of equals. Events (pushes, deployments, merged pull requests) record what happened and
are never marked. Nothing is deleted; search leaves the marked ones out (``filters.fresh: true``)
or lists only them (``fresh: false``) when asked, and a stale claim's lineage reaches the change.

The mark is what the stored events imply, whatever the order of arrival and however often an event is
replayed: each write keeps it so, touching only what it changes. A written observation naming code
gets the mark of the likeliest later push (pages of later pushes, oldest first, at most
``MAX_CANDIDATES``, with the merged pull requests of their commits; it stops at the first deletion
of a named file, which nothing beats); a written push re-judges the older claims naming its
paths: an unmarked one takes it; one marked by an earlier push keeps its mark unless this push
has evidence for it (its own words against the claim's: no read) and stronger evidence than the
marking push's (one read); one marked by a later push takes this one unless the later has stronger
evidence (``stale_at``, stored with the mark, says which is earlier). A deleted push releases
those it marked, each marked again from what remains. A mark whose push time is unknown (made
before ``stale_at``) or tied with the new push's is recomputed whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import ValidationError

from neural_memory.domain.chunking import DEFINITIONS_LINE, without_path_lists
from neural_memory.domain.record_rules import CLAIM_TYPES
from neural_memory.domain.text_refs import ANY_REPOSITORY, MAX_PATH_CHARS, code_names, suffixes, words_of
from neural_memory.models import CodeRef
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
            mark = _likeliest_later_push(store, workspace_id, record, now, batch_pushes)
            if mark != _mark_of(record):
                changes[record.id] = mark
    ids = {record.id for record in written}
    # The older observations a written push marks, and those a deleted push marked.
    for push, removed in [(p, False) for p in batch_pushes] + (
        [(deleted, True)] if deleted and _marks(deleted) else []
    ):
        # Every older claim naming its paths: one marked earlier may still be better named by it.
        scope = Referencing(before=push.occurred_at, claims=True)
        change: Change | None = None  # read once a claim needs it (most pushes name no claim's path)
        for holder in referencing(store, workspace_id, touched(push), now, scope):
            if holder.id in ids:
                continue
            change = change or _change_of(store, workspace_id, push, now)
            decided = _holder_mark(
                store, workspace_id, holder, change, removed, holder.id in changes, now, batch_pushes
            )
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
    change: Change,
    removed: bool,
    changed: bool,
    now: datetime,
    batch: Sequence[ObservationRecord],
) -> StaleMark | None | Literal[False]:
    """The mark of an older ``holder`` of ``change``'s paths once its push is written (or removed),
    or False when it stays as it is. ``changed``: another push of the batch marked it already."""
    push = change.push
    commit = pushed_commit(push) or ""
    own = holder.possibly_stale == commit and holder.stale_at == push.occurred_at
    if removed:
        if not own and holder.stale_at is not None:
            return False  # marked by another push
        return _likeliest_later_push(store, workspace_id, holder, now, [])
    if own and not changed:
        return False  # marked by this push already (a replay)
    tied = holder.stale_at is not None and holder.stale_at == push.occurred_at
    unknown = holder.stale_at is None and holder.possibly_stale is not None  # marked before stale_at
    if changed or tied or unknown:  # ties are by id, and another push of the batch may be earlier
        return _likeliest_later_push(store, workspace_id, holder, now, batch)
    mine = (commit, push.occurred_at)
    if holder.possibly_stale is None or holder.stale_at is None:
        return mine
    strength = evidence(change, holder)
    earlier = holder.stale_at < push.occurred_at
    if earlier and strength == 0:
        return False  # nothing beats an earlier mark on a mere touch
    current = _marking_change(store, workspace_id, holder, now)
    if current is None:  # the marking push is gone: judge it whole
        return _likeliest_later_push(store, workspace_id, holder, now, batch)
    theirs = evidence(current, holder)
    if strength > theirs or (strength == theirs and not earlier):
        return mine
    return False


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


PUSH_PAGE = 20  # later pushes read at a time to judge a claim's likeliest
MAX_CANDIDATES = 200  # later pushes judged at most (a path every push touches has thousands)
REMOVED, REWROTE, NAMED, TOUCHED = 3, 2, 1, 0  # the evidence a change has of having made a claim stale


@dataclass(frozen=True)
class Change:
    """A push and the merged pull request its head commit landed (None: a direct push)."""

    push: ObservationRecord
    pull_request: ObservationRecord | None = None


def evidence(change: Change, claim: ObservationRecord) -> int:
    """How strongly ``change`` (a push touching one of the claim's paths) says it changed what the
    claim is about: ``REMOVED`` a file it names, ``REWROTE`` code it names (the pull request's
    "Changed code"), ``NAMED`` that code in its words (commit subjects, the pull request's title
    and description), else ``TOUCHED``."""
    push, pr = change.push, change.pull_request
    refs = set(claim.code_refs or ())
    removed = push.metadata.get("removedPaths")
    if isinstance(removed, list):
        repository = push.metadata.get("repo")
        gone = [f"{repository}:{p}" for p in removed if isinstance(p, str)]
        if refs & set(gone + suffixes(gone)):
            return REMOVED
    names = code_names(f"{claim.title}\n{claim.content}")
    if not names:
        return TOUCHED
    if pr is not None:
        defined = next((line for line in pr.content.split("\n") if line.startswith(DEFINITIONS_LINE)), "")
        if names & words_of(defined):
            return REWROTE
    said = f"{push.title}\n{push.content}" + (f"\n{pr.title}\n{pr.content}" if pr is not None else "")
    words = words_of(without_path_lists(said))  # the paths it touched say nothing of the code in them
    if any(name in words or all(part in words for part in name.split(".")) for name in names):
        return NAMED
    return TOUCHED


def _change_of(store: Store, workspace_id: str, push: ObservationRecord, now: datetime) -> Change:
    return _changes(store, workspace_id, [push], now)[0]


def _changes(store: Store, workspace_id: str, pushes: Sequence[ObservationRecord], now: datetime) -> list[Change]:
    """Each push with the merged pull request of its head commit (one read for all of them)."""
    shas = [sha for p in pushes if (sha := pushed_commit(p))]
    merged: dict[str, ObservationRecord] = {}
    if shas:
        found = store.find(
            workspace_id,
            Find(
                metadata_any=tuple((("commitSha", sha),) for sha in dict.fromkeys(shas)),
                observation_types=("pull_request_merged",),
                live_at=now,
            ),
        )
        for pr in found:
            if isinstance(landed := pr.metadata.get("commitSha"), str):
                merged.setdefault(landed, pr)
    return [Change(p, merged.get(pushed_commit(p) or "")) for p in pushes]


def _marking_change(store: Store, workspace_id: str, holder: ObservationRecord, now: datetime) -> Change | None:
    """The push (and its pull request) that ``holder``'s mark names, or None if it is gone."""
    sha = holder.possibly_stale
    if not sha:
        return None
    found = store.find(
        workspace_id,
        Find(
            metadata_any=((("commitSha", sha),),),
            observation_types=("push", "pull_request_merged"),
            live_at=now,
        ),
    )
    push = next((r for r in found if is_push(r) and r.occurred_at == holder.stale_at), None)
    if push is None:
        return None
    return Change(push, next((r for r in found if r.observation_type == "pull_request_merged"), None))


def _likeliest_later_push(
    store: Store, workspace_id: str, record: ObservationRecord, now: datetime, batch: Sequence[ObservationRecord]
) -> StaleMark | None:
    """The commit and time of the later push (after ``record``) touching one of its paths with the
    strongest ``evidence``, the earliest of equals (ties by id): among the stored ones (read
    oldest first, a page at a time, at most ``MAX_CANDIDATES``; a deletion of a named file ends
    the reading) and ``batch``; None if there is none."""
    refs = set(record.code_refs or ())
    pushes = [p for p in batch if p.occurred_at > record.occurred_at and refs & set(touched(p)) and _marks(p)]
    seen = 0
    while seen < MAX_CANDIDATES:
        page = referencing(
            store,
            workspace_id,
            sorted(refs),
            now,
            Referencing(after=record.occurred_at, pushes=True, limit=PUSH_PAGE + seen),
        )[seen:]
        marking = [p for p in page if _marks(p)]
        pushes += marking
        seen += len(page)
        if len(page) < PUSH_PAGE or any(evidence(Change(p), record) == REMOVED for p in marking):
            break
    if not pushes:
        return None
    unique = list({p.id: p for p in pushes}.values())
    changes = _changes(store, workspace_id, unique, now)
    best = min(changes, key=lambda c: (-evidence(c, record), c.push.occurred_at, c.push.id)).push
    return (pushed_commit(best) or "", best.occurred_at)
