"""From the single index of earlier versions (every workspace's documents behind the alias
``<prefix>``) to an index per workspace (``workspace_indices``): each workspace's documents are
copied as they are (chunks, vectors, marks) into its own index, created on the way for the model
the old index was built for.

The copy never overwrites: an observation whose record (chunk 0) the workspace's index holds
with another ``content_hash`` or ``ingested_at`` than the old index's was written there since (by
the new writers), so none of its old chunks is copied; one it holds as the old index has it was
copied by an earlier run (stopped at its deadline, perhaps between two of its chunks), whose
other chunks are copied now (``create``: a chunk already there stays as it is). Run it
again to catch up what old writers still wrote meanwhile; an observation deleted from a workspace
index before the copy reached it is copied back (run it before the new writers take traffic: the
deploy's bootstrap does). The old index is left as it was, marked ``migrated_at`` in its ``_meta``
(the bootstrap does not copy it again), until an operator deletes it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from time import monotonic
from typing import TYPE_CHECKING, Any

from neural_memory.clock import to_iso, utcnow
from neural_memory.stores.opensearch.index import OpenSearchAdmin, built_for
from neural_memory.stores.opensearch.mapping import index_body
from neural_memory.stores.opensearch.workspace_indices import all_alias, workspace_alias

if TYPE_CHECKING:
    from neural_memory.stores.opensearch.workspace_indices import WorkspaceIndices

PAGE = 1_000  # chunk documents read (and written) per request
_CONFLICT = 409


@dataclass
class MigrationReport:
    """What a migration run did (``source`` None: no single index to migrate)."""

    source: str | None = None
    workspaces: set[str] = field(default_factory=set)
    copied: int = 0  # chunk documents
    kept: int = 0  # chunk documents of observations the workspace index already held
    failed: dict[str, str] = field(default_factory=dict)  # document id -> reason
    complete: bool = False

    def summary(self) -> str:
        """One line for a person."""
        if self.source is None:
            return "no single index from before per-workspace indices: nothing to migrate"
        failed = f", {len(self.failed)} refused (first: {next(iter(self.failed.items()))})" if self.failed else ""
        state = "complete" if self.complete else "stopped at its deadline: run again"
        return (
            f"{self.source} -> {len(self.workspaces)} workspace indices: {self.copied} documents copied, "
            f"{self.kept} kept as the workspace index had them{failed}; {state}"
        )


def legacy_index(indices: WorkspaceIndices) -> str | None:
    """The physical index behind the old single alias (the prefix itself), if there is one."""
    return OpenSearchAdmin(indices.client, indices.prefix).live()


def legacy_notice(indices: WorkspaceIndices) -> str | None:
    """A line for ``serve``'s start when the old single index is there and not migrated yet."""
    source = legacy_index(indices)
    if source is None or "migrated_at" in OpenSearchAdmin(indices.client, indices.prefix).meta(source):
        return None
    return f"the single index {source} is not migrated: run `neural-memory migrate-index` to copy it per workspace"


def migrate(indices: WorkspaceIndices, *, again: bool = False, deadline: float | None = None) -> MigrationReport:
    """Copy the old single index into per-workspace indices (see the module docstring); ``again``
    copies one already marked migrated (a catch-up); ``deadline`` (``time.monotonic()``) stops
    between pages, unmarked (the next run starts over, skipping what was copied)."""
    client = indices.client
    old = OpenSearchAdmin(client, indices.prefix)
    source = old.live()
    report = MigrationReport(source=source)
    if source is None:
        return report
    meta = old.meta(source)
    if "migrated_at" in meta and not again:
        report.complete = True
        return report
    built = built_for(meta)
    body = index_body(int(built["dimension"] or 1), str(built["model_id"] or "none"), indices.shards, indices.replicas)
    created: set[str] = set()
    mine: set[tuple[str, str]] = set()  # observations this run copied (a page may cut one in two)
    client.indices.refresh(index=source)
    request: dict[str, Any] = {
        "size": PAGE,
        "query": {"match_all": {}},
        "sort": [{"workspace_id": "asc"}, {"observation_id": "asc"}, {"chunk_no": "asc"}],
    }
    while hits := client.search(index=source, body=request)["hits"]["hits"]:
        if deadline is not None and monotonic() > deadline:
            return report
        by_workspace: dict[str, list[dict[str, Any]]] = {}
        for hit in hits:
            by_workspace.setdefault(hit["_source"]["workspace_id"], []).append(hit)
        for workspace_id, found in by_workspace.items():
            alias = workspace_alias(indices.prefix, workspace_id)
            if alias not in created:
                _create(indices, workspace_id, body)
                created.add(alias)
            report.workspaces.add(workspace_id)
            _copy(client, alias, workspace_id, found, mine, report)
        request["search_after"] = hits[-1]["sort"]
    if created:  # an empty old index created none: there is no alias of every workspace to refresh
        client.indices.refresh(index=all_alias(indices.prefix))
    if not report.failed:
        client.indices.put_mapping(index=source, body={"_meta": meta | {"migrated_at": to_iso(utcnow())}})
        report.complete = True
    return report


def _create(indices: WorkspaceIndices, workspace_id: str, body: dict[str, Any]) -> None:
    """The workspace's index for the old index's model, unless it has one (written since)."""
    if not indices.client.indices.exists_alias(name=workspace_alias(indices.prefix, workspace_id)):
        indices.create(workspace_id, body)


_WRITTEN = ("content_hash", "ingested_at")  # what a write of the observation changes


def _written(doc: dict[str, Any]) -> tuple[Any, ...]:
    source = doc.get("_source") or {}
    return tuple(source.get(name) for name in _WRITTEN)


def _copy(
    client: Any,
    alias: str,
    workspace_id: str,
    hits: list[dict[str, Any]],
    mine: set[tuple[str, str]],
    report: MigrationReport,
) -> None:
    """One page's documents of one workspace, but for observations its index already holds."""
    observations = sorted({h["_source"]["observation_id"] for h in hits} - {o for w, o in mine if w == workspace_id})
    firsts = [f"{workspace_id}:{o}:0" for o in observations]
    held = set()
    if firsts:
        new = client.mget(index=alias, body={"ids": firsts}, _source_includes=list(_WRITTEN))["docs"]
        old = client.mget(index=hits[0]["_index"], body={"ids": firsts}, _source_includes=list(_WRITTEN))["docs"]
        held = {
            o
            for o, doc, was in zip(observations, new, old, strict=True)
            if doc.get("found") and _written(doc) != _written(was)
        }
    mine.update((workspace_id, o) for o in observations if o not in held)
    lines: list[str] = []
    for hit in hits:
        if hit["_source"]["observation_id"] in held:
            report.kept += 1
            continue
        # create: a chunk the workspace index got meanwhile is never overwritten by the old copy
        lines += [json.dumps({"create": {"_index": alias, "_id": hit["_id"]}}), json.dumps(hit["_source"])]
    if not lines:
        return
    reply = client.bulk(index=alias, body="\n".join(lines) + "\n", refresh="false")
    for entry in reply["items"]:
        result = entry["create"]
        status = int(result.get("status", 200))
        if status < 300:
            report.copied += 1
        elif status == _CONFLICT:
            report.kept += 1
        else:
            report.failed[result["_id"]] = str((result.get("error") or {}).get("reason", status))
