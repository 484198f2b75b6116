"""The index step of a deploy and of the maintenance schedule (``Service.ensure_index``): the
single index of earlier versions migrated into per-workspace indices (once), the workspace index
template put for this model, then each workspace's index created or verified, or reindexed
(``reindexing.Reindexer``) when it was built for another model or mapping."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.stores.opensearch.index import ReindexBusy, space_of
from neural_memory.use_cases.reindexing import Reindexer

if TYPE_CHECKING:
    from neural_memory.use_cases.reindexing import Embeds

BOOTSTRAP_LINES = 5  # reindex summaries a bootstrap reports one by one (CloudFormation keeps 4 KB)


def bootstrap(service: Embeds, *, deadline: float | None = None) -> str:
    """The index step of a deploy (and of the maintenance schedule): migrate the single index of
    earlier versions into per-workspace indices (once); put the workspace index template for this
    model; then per workspace, create or verify its index, or, when it was built for another model
    or mapping or a reindex is unfinished, reindex it until ``deadline``. Returns what was done."""
    from neural_memory.stores.factory import build_indices
    from neural_memory.stores.opensearch.migration import migrate

    indices = build_indices(service.settings)
    if indices is None:
        return "ok"
    space = space_of(service.embedder)
    done: list[str] = []
    migrated = migrate(indices, deadline=deadline)
    if migrated.source is not None and migrated.copied + len(migrated.failed):
        done.append(migrated.summary())
    done.append(indices.put_template(*space))
    checked: dict[str, int] = {}
    reindexed: list[str] = []
    for alias in indices.aliases():
        admin = indices.admin(alias)
        pending = admin.in_progress()
        if not (admin.needs_reindex(*space) or (pending and pending.phase == "swapped")):
            outcome = admin.ensure_index(*space)
            checked[outcome] = checked.get(outcome, 0) + 1
            continue
        # The writers deployed after this bootstrap write the new fields to the live index until
        # the swap: it takes them first.
        added = admin.add_fields()
        try:
            summary = Reindexer(service, admin).run(deadline=deadline).summary()
            reindexed.append(f"{summary}; added {', '.join(added)} to the live index first" if added else summary)
        except ReindexBusy as busy:
            reindexed.append(f"reindex left to the run that holds it: {busy}")
    if checked:
        done.append("workspace indices " + ", ".join(f"{n} {outcome}" for outcome, n in sorted(checked.items())))
    done += reindexed[:BOOTSTRAP_LINES]
    if len(reindexed) > BOOTSTRAP_LINES:
        done.append(f"and {len(reindexed) - BOOTSTRAP_LINES} more reindexed")
    return "; ".join(done)
