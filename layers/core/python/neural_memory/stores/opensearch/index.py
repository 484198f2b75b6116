"""The OpenSearch index lifecycle: versioned physical indices behind one alias.

Every reader and writer names the alias (each workspace's: ``workspace_indices``; the single
index of earlier versions was ``Settings.opensearch_index`` itself); the documents live in a
physical index ``<alias>-NNNNNN`` whose mapping ``_meta`` records the schema version, the
embedding model and its dimension. A new model or mapping means a new physical index, built
while the old one keeps answering (``neural_memory.use_cases.reindexing``) and swapped in behind the alias in
one ``_aliases`` request. A reindex in progress is recorded in the new index's ``_meta``
(``reindex``: the source index, when it started, the last observation copied), so an
interrupted one resumes where it stopped. Old indices stay until they are dropped on request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from neural_memory.clock import from_iso, to_iso
from neural_memory.errors import ConfigurationError, NotFound
from neural_memory.stores.opensearch.mapping import ADDED_IN_PLACE, SCHEMA_VERSION, index_body

if TYPE_CHECKING:
    from datetime import datetime

    from neural_memory.providers.embeddings.base import Embedder

VERSION_DIGITS = 6
FAILURES_KEPT = 200  # refused observations remembered in the index's _meta (the first ones)
LEASE = timedelta(minutes=2)  # how long a reindex's claim holds without being renewed


class ReindexBusy(Exception):
    """Another reindex holds the claim on this target (or moved the alias meanwhile)."""


@dataclass
class ReindexState:
    """A reindex: from ``source`` into ``target``. ``cursor`` is the sort key (workspace,
    observation id) of the last observation copied; ``caught_up_to`` when the last complete
    catch-up started; ``phase`` is ``copy`` until the alias moves, then ``swapped`` until the
    writes that raced the swap are caught up; ``lease`` who works on it, and until when."""

    source: str
    target: str
    started_at: str
    cursor: list[str] | None = None
    copied: int = 0
    failed: dict[tuple[str, str], str] = field(default_factory=dict)
    phase: str = "copy"
    caught_up_to: str | None = None
    lease: dict[str, str] = field(default_factory=dict)
    copied_all: bool = False
    swapped_at: str | None = None

    def as_meta(self) -> dict[str, Any]:
        """The ``reindex`` entry of the target's ``_meta``."""
        failed = [[w, i, reason[:300]] for (w, i), reason in list(self.failed.items())[:FAILURES_KEPT]]
        return {
            "source": self.source,
            "started_at": self.started_at,
            "cursor": self.cursor,
            "copied": self.copied,
            "failed": failed,
            "phase": self.phase,
            "caught_up_to": self.caught_up_to,
            "lease": self.lease,
            "copied_all": self.copied_all,
            "swapped_at": self.swapped_at,
        }

    @classmethod
    def from_meta(cls, target: str, entry: dict[str, Any]) -> ReindexState:
        """The state a target's ``_meta`` records."""
        return cls(
            source=entry["source"],
            target=target,
            started_at=entry["started_at"],
            cursor=entry.get("cursor"),
            copied=int(entry.get("copied", 0)),
            failed={(w, i): reason for w, i, reason in entry.get("failed") or []},
            phase=entry.get("phase", "copy"),
            caught_up_to=entry.get("caught_up_to"),
            lease=dict(entry.get("lease") or {}),
            copied_all=bool(entry.get("copied_all")),
            swapped_at=entry.get("swapped_at"),
        )


def space_of(embedder: Embedder | None) -> tuple[int, str]:
    """The (dimension, model id) an index is built for: the embedder's, or a vectorless one."""
    return (embedder.dimension, embedder.model_id) if embedder is not None else (1, "none")


def expected_meta(dimension: int, model_id: str) -> dict[str, Any]:
    """What an index's ``_meta`` must say for a service with this embedder."""
    return {"schema_version": SCHEMA_VERSION, "model_id": model_id, "dimension": dimension}


def built_for(meta: dict[str, Any]) -> dict[str, Any]:
    """What an index's ``_meta`` says it was built for (the keys of ``expected_meta``)."""
    return {key: meta.get(key) for key in ("schema_version", "model_id", "dimension")}


class OpenSearchAdmin:
    """Index management behind the alias: create, verify, keep replicas in step, start or resume
    a reindex, swap the alias, drop an old index."""

    def __init__(self, client: Any, alias: str, shards: int = 1, replicas: int = 1, group: str | None = None) -> None:
        self.client = client
        self.alias = alias
        self._shards = shards
        self._replicas = replicas
        # An alias over many such aliases' live indices (every workspace's): the live index stays
        # behind it, moved by the same atomic swap.
        self._group = group

    # ------------------------------------------------------------------ reading the layout

    def live(self) -> str | None:
        """The physical index the alias names; the alias itself for an index created under that
        name before indices were versioned; None if neither exists."""
        from opensearchpy.exceptions import NotFoundError

        try:
            return str(next(iter(self.client.indices.get_alias(index=self.alias))))
        except (NotFoundError, StopIteration):
            return None

    def versions(self) -> list[str]:
        """Every physical index of this alias, oldest first."""
        from opensearchpy.exceptions import NotFoundError

        try:
            found = self.client.indices.get(index=f"{self.alias}-*")
        except NotFoundError:
            return []
        return sorted(name for name in found if _version_of(self.alias, name) is not None)

    def meta(self, index: str) -> dict[str, Any]:
        """The index's mapping ``_meta``."""
        mapping = self.client.indices.get_mapping(index=index)
        return dict(next(iter(mapping.values()))["mappings"].get("_meta", {}))

    def in_progress(self) -> ReindexState | None:
        """The reindex to resume: one whose alias swap is not caught up yet (on the live index),
        else the newest one started from the live index and not swapped in."""
        live = self.live()
        if live is None:
            return None
        entry = self.meta(live).get("reindex")
        if entry and entry.get("phase") == "swapped":
            return ReindexState.from_meta(live, entry)
        for name in reversed(self.versions()):
            entry = self.meta(name).get("reindex")
            if name != live and entry and entry.get("source") == live:
                return ReindexState.from_meta(name, entry)
        return None

    # ------------------------------------------------------------------ bootstrap

    def ensure_index(self, dimension: int, model_id: str) -> str:
        """``created``, ``ok`` or ``replicas updated`` (and ``, added <fields>`` when the live index
        lacked a field of ``ADDED_IN_PLACE``); raises ``ConfigurationError`` when the live index
        was built for another model, dimension or schema version (a reindex is needed, never
        silent mixing)."""
        live = self.live()
        if live is None:
            target = self._create(self._next_version(), dimension, model_id, None)
            aliases = [self.alias, *([self._group] if self._group else [])]
            actions = [{"add": {"index": target, "alias": alias}} for alias in aliases]
            self.client.indices.update_aliases(body={"actions": actions})
            return "created"
        expected, found = expected_meta(dimension, model_id), built_for(self.meta(live))
        if found != expected:
            raise ConfigurationError(
                f"index {live!r} behind {self.alias!r} was built for {found}, this service needs {expected}: "
                "run `neural-memory reindex` (the maintenance function does it at deploy)"
            )
        added = self.add_fields()
        outcome = self._sync_replicas(live)
        return f"{outcome}, added {', '.join(added)}" if added else outcome

    def add_fields(self) -> list[str]:
        """Put the ``ADDED_IN_PLACE`` fields the live index lacks into its mapping (an index
        created before them); returns their names. Whatever the index was built for: while a
        reindex for another model runs, writes still go to it, with these fields."""
        live = self.live()
        if live is None:
            return []
        mapping = next(iter(self.client.indices.get_mapping(index=live).values()))["mappings"]
        wanted = index_body(1, "none")["mappings"]["properties"]  # none of them depends on the model
        missing = {name: wanted[name] for name in ADDED_IN_PLACE if name not in mapping.get("properties", {})}
        if missing:
            self.client.indices.put_mapping(index=live, body={"properties": missing})
        return sorted(missing)

    def needs_reindex(self, dimension: int, model_id: str) -> bool:
        """Whether the live index was built for another model, dimension or schema version."""
        live = self.live()
        if live is None:
            return False
        return built_for(self.meta(live)) != expected_meta(dimension, model_id)

    def _sync_replicas(self, index: str) -> str:
        settings = self.client.indices.get_settings(index=index)
        replicas = int(next(iter(settings.values()))["settings"]["index"]["number_of_replicas"])
        if replicas == self._replicas:
            return "ok"
        # The replica count is the one setting that changes in place (the stage's node count)
        self.client.indices.put_settings(index=index, body={"index": {"number_of_replicas": self._replicas}})
        return "replicas updated"

    def _next_version(self) -> str:
        numbers = [_version_of(self.alias, name) or 0 for name in self.versions()]
        return f"{self.alias}-{max(numbers, default=0) + 1:0{VERSION_DIGITS}d}"

    def _create(self, name: str, dimension: int, model_id: str, state: ReindexState | None) -> str:
        body = index_body(dimension, model_id, self._shards, self._replicas)
        if state is not None:
            body["mappings"]["_meta"]["reindex"] = state.as_meta()
        self.client.indices.create(index=name, body=body)
        return name

    # ------------------------------------------------------------------ reindex

    def begin_reindex(self, dimension: int, model_id: str, now: datetime) -> ReindexState | None:
        """The reindex to run for this embedder: the one in progress (resumed), else a new
        physical index for it; None when the live index already fits."""
        live = self.live()
        if live is None:
            raise ConfigurationError(f"nothing to reindex: no index behind {self.alias!r}")
        state = self.in_progress()
        if state is not None and state.phase == "swapped":
            return state
        if not self.needs_reindex(dimension, model_id):
            return None
        # A reindex for another model left unfinished stays (dropped on request); this model
        # gets an index of its own.
        if state is not None and built_for(self.meta(state.target)) == expected_meta(dimension, model_id):
            return state
        if (back := self._replaced(live, dimension, model_id)) is not None:
            return back
        state = ReindexState(source=live, target=self._next_version(), started_at=to_iso(now))
        self._create(state.target, dimension, model_id, state)
        return state

    def _replaced(self, live: str, dimension: int, model_id: str) -> ReindexState | None:
        """A return to the index the live one replaced, when it fits this embedder (a rolled-back
        deploy): it is whole up to the swap, so only what changed since is caught up."""
        meta = self.meta(live)
        previous, swapped_at = meta.get("reindexed_from"), meta.get("swapped_at")
        if not swapped_at or previous not in self.versions():
            return None
        kept = self.meta(previous)
        if "reindex" in kept or built_for(kept) != expected_meta(dimension, model_id):
            return None
        state = ReindexState(source=live, target=previous, started_at=swapped_at, copied_all=True)
        self.save_progress(state)
        return state

    def claim(self, state: ReindexState, owner: str, now: datetime) -> None:
        """Take or renew the claim on ``state``'s target for ``LEASE``; ``ReindexBusy`` if another
        holds an unexpired one. Two claims written at once: the one read back wins, and the other
        side sees it at its next ``check``."""
        held = self.meta(state.target).get("reindex", {}).get("lease") or {}
        if held.get("owner") not in (None, owner) and from_iso(held["until"]) > now:
            raise ReindexBusy(f"another reindex into {state.target} holds its claim until {held['until']}")
        state.lease = {"owner": owner, "until": to_iso(now + LEASE)}
        self.save_progress(state)
        self.check(state, owner)

    def release(self, state: ReindexState) -> None:
        """Give the claim up (the next run need not wait for it to expire)."""
        state.lease = {}
        self.save_progress(state)

    def check(self, state: ReindexState, owner: str) -> None:
        """``ReindexBusy`` unless ``owner`` still holds the claim and the alias is where the
        reindex left it (another run may have finished the same reindex meanwhile)."""
        held = self.meta(state.target).get("reindex", {}).get("lease") or {}
        if held.get("owner") != owner:
            raise ReindexBusy(f"another reindex into {state.target} took over")
        expected = state.source if state.phase == "copy" else state.target
        if self.live() != expected:
            raise ReindexBusy(f"the alias {self.alias!r} moved to {self.live()!r} meanwhile")

    def save_progress(self, state: ReindexState) -> None:
        """Record the reindex's progress in its target's ``_meta`` (the whole ``_meta`` is replaced)."""
        meta = self.meta(state.target) | {"reindex": state.as_meta()}
        self.client.indices.put_mapping(index=state.target, body={"_meta": meta})

    def block_writes(self, index: str, *, blocked: bool) -> None:
        """Refuse writes to ``index`` from now on (writers retry them: ``cluster_block_exception``),
        or take them again."""
        self.client.indices.put_settings(index=index, body={"index": {"blocks": {"write": blocked}}})

    def refresh(self, index: str) -> None:
        """Make what was written to ``index`` searchable."""
        self.client.indices.refresh(index=index)

    def swap(self, state: ReindexState) -> None:
        """Point the alias at the target in one atomic request (it fails if the alias no longer
        names the source), and record the phase. An index created under the alias's own name
        (before versioning) cannot stand beside the alias: it is removed in the same request,
        the one case where the old copy is not kept."""
        add = {"add": {"index": state.target, "alias": self.alias}}
        if state.source == self.alias:
            remove: dict[str, Any] = {"remove_index": {"index": state.source}}
        else:
            remove = {"remove": {"index": state.source, "alias": self.alias, "must_exist": True}}
        actions = [remove, add]
        if self._group:
            if state.source != self.alias:
                actions.append({"remove": {"index": state.source, "alias": self._group}})
            actions.append({"add": {"index": state.target, "alias": self._group}})
        self.client.indices.update_aliases(body={"actions": actions})
        state.phase = "swapped"
        self.save_progress(state)

    def finish(self, state: ReindexState) -> None:
        """The reindex is complete: its state leaves the live index's ``_meta``."""
        meta = self.meta(state.target)
        meta.pop("reindex", None)
        meta |= {"reindexed_from": state.source, "swapped_at": state.swapped_at}
        self.client.indices.put_mapping(index=state.target, body={"_meta": meta})

    def drop(self, index: str) -> None:
        """Delete an old physical index of this alias; never the live one."""
        if _version_of(self.alias, index) is None:
            raise NotFound(f"{index!r} is not a physical index of {self.alias!r}")
        if index == self.live():
            raise ConfigurationError(f"{index!r} is the live index behind {self.alias!r}; it is never dropped")
        if index not in self.versions():
            raise NotFound(f"index {index!r} does not exist")
        self.client.indices.delete(index=index)


def _version_of(alias: str, name: str) -> int | None:
    """N of ``<alias>-NNNNNN``, else None."""
    suffix = name.removeprefix(f"{alias}-")
    if suffix == name or len(suffix) != VERSION_DIGITS or not suffix.isdigit():
        return None
    return int(suffix)
