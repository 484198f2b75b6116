"""The production store: an OpenSearch k-NN index, one document per chunk.

- Document ``_id`` = ``{workspace}:{observation id}:{chunk}``: a retried or replayed write
  overwrites in place. Chunk 0 also carries the parent's full text (not indexed), so results
  are rebuilt by one batch ``mget`` of their parents.
- k-NN uses the faiss engine, HNSW, ``innerproduct`` on unit vectors (= cosine); the filter
  goes *inside* the ``knn`` clause (efficient filtering, still ``k`` results), ``size`` is set
  explicitly. Lexical is a ``multi_match`` (never query-string syntax) under the same filter;
  both go out in one ``_msearch``. BM25's k1 and b are the embedded store's (``neural_memory.domain.bm25``),
  the index's default similarity. If k-NN fails while lexical answers, the search answers
  from lexical and says so in ``degraded``.
- Scores follow the ``Store`` contract: faiss inner-product ``_score`` is mapped back to cosine
  (``score - 1`` above 1, ``1 - 1/score`` below) and clipped to [0, 1]; BM25 is divided by the
  query's best.
- An index per workspace (``workspace_indices``: its BM25 statistics are that workspace's
  alone): the store is given the prefix and names each workspace's alias; a workspace's first
  write creates its index from the bootstrap's template, and the maintenance across workspaces
  goes through the alias over all of them. The workspace filter stays in every query all the
  same. Checking and replacing physical indices behind an alias is ``index.OpenSearchAdmin``'s
  (the maintenance function, ``serve`` and ``neural-memory reindex``), never a constructor's.

This module is the ``Store`` port's OpenSearch implementation. Beside it in this folder, one
concept each: records as chunk documents (``documents.py``), bulk writes (``bulk.py``), the query
dialect (``dsl.py``: ``Filter``, ``Find``, facets, the chunks a write leaves behind), ``retrieve``'s
one ``_msearch`` and its hits (``retrieval.py``), the index mapping (``mapping.py``), error
translation (``errors.py``), the client (``client.py``), index admin (``index.py``), the workspace
indices (``workspace_indices.py``), patches and lifecycle marks (``patches.py``), the stored
vectors as the embedding cache (``stored_vectors.py``), whole-index reads (``scan.py``), reindex
and the migration from one index (``migration.py``).
"""

from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING, Any, overload

from neural_memory.errors import BackendUnavailable
from neural_memory.models import FacetCounts, ObservationRecord, Retrieved, UpsertOutcome
from neural_memory.settings import OPENSEARCH_BULK_MAX_BYTES
from neural_memory.stores.base import IndexedObservation, holds
from neural_memory.stores.find import Find, check_count
from neural_memory.stores.opensearch.bulk import Bulk
from neural_memory.stores.opensearch.documents import doc_id, document, observation_of, record_of
from neural_memory.stores.opensearch.dsl import (
    facet_counts,
    facets_body,
    find_body,
    find_query,
    leftover_chunks_query,
    render_opensearch,
)
from neural_memory.stores.opensearch.errors import domain_error
from neural_memory.stores.opensearch.patches import MARK_PAGE, OpenSearchPatches
from neural_memory.stores.opensearch.retrieval import retrieve_hits
from neural_memory.stores.opensearch.workspace_indices import WorkspaceIndices, all_alias, workspace_alias

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from neural_memory.domain.filters import Filter
    from neural_memory.models import Vector

# Chunks one purge request deletes: each finishes well inside the client's timeout, however large
# the whole purge is.
PURGE_SLICE = 5_000
COUNT_PAGE = 1_000  # values per page of a count by a field (a composite aggregation)
_READS = {"search", "count", "delete_by_query"}  # the requests that take ignore_unavailable


class OpenSearchStore(OpenSearchPatches):
    """``Store`` over an index per workspace under the prefix ``index`` (``workspace_indices``; see
    the module docstring), or over the one physical index ``index`` with ``single_index`` (a
    reindex's source and target, a migration's source); ``bulk_max_bytes`` is
    ``Settings.opensearch_bulk_max_bytes``."""

    def __init__(
        self,
        client: Any,
        index: str,
        refresh: str = "false",
        max_retries: int = 3,
        bulk_max_bytes: int = OPENSEARCH_BULK_MAX_BYTES,
        purge_slice: int = PURGE_SLICE,
        *,
        single_index: bool = False,
    ) -> None:
        self._client = client
        self._index = index
        self._single = single_index
        # Maintenance across workspaces reads and deletes through the alias over all of them.
        self._all = index if single_index else all_alias(index)
        self._indices = WorkspaceIndices(client, index)
        self._created: set[str] = set()  # workspace indices known to exist (no check per write)
        self._refresh = refresh
        self._bulk = Bulk(client, self._call, refresh, max_retries, bulk_max_bytes)
        self._purge_slice = purge_slice

    @property
    def client(self) -> Any:
        """The OpenSearch client (the audit trail writes beside the workspace indices with it)."""
        return self._client

    @property
    def prefix(self) -> str:
        """The workspace indices' prefix (``Settings.opensearch_index``)."""
        return self._index

    @property
    def refresh(self) -> str:
        """The ``refresh`` of its writes."""
        return self._refresh

    def _index_of(self, workspace_id: str) -> str:
        """The index (an alias) holding ``workspace_id``'s documents."""
        return self._index if self._single else workspace_alias(self._index, workspace_id)

    # ------------------------------------------------------------------ writes

    def write(
        self,
        workspace_id: str,
        items: Sequence[IndexedObservation],
        expected: Mapping[str, Mapping[str, object] | None] | None = None,
    ) -> UpsertOutcome:
        """Bulk-index every chunk; retry only retryable item failures; drop chunks a shorter new
        version no longer has. An observation with a chunk refused for good is listed in
        ``failed`` with the reason (a new one is removed again, so it is never half-stored); the
        others are stored all the same. With ``expected``, chunk 0 (the record) of those items is
        written first, conditionally on the version read with the state compared
        (``if_seq_no``/``if_primary_term``, or ``create`` for an absent one); an item whose state
        differs or whose condition fails is left out (``stale``), its other chunks untouched."""
        outcome = UpsertOutcome()
        if not items:
            return outcome
        firsts = [doc_id(workspace_id, item.record.id, 0) for item in items]
        index = self._index_of(workspace_id)
        if not self._single and index not in self._created:
            # The workspace's first write creates its index (checked once per process), never the
            # index a write to a missing alias would auto-create under the alias's name.
            if not self._call(self._client.indices.exists, index=index):
                self._call(self._indices.create, workspace_id=workspace_id)
            self._created.add(index)
        found = self._call(self._client.mget, index=index, body={"ids": firsts}, _source=bool(expected))
        existing = {doc["_id"] for doc in found["docs"] if doc.get("found")}
        owner: dict[str, str] = {}  # document id -> observation id
        if expected:
            items, outcome.stale = self._claim(workspace_id, items, expected, found["docs"], outcome.failed)
        actions: dict[str, dict[str, Any]] = {}
        for item in items:
            for chunk in item.chunks:
                _id = doc_id(workspace_id, item.record.id, chunk.chunk_no)
                owner[_id] = item.record.id
                if not (expected and chunk.chunk_no == 0 and item.record.id in expected):  # claimed already
                    actions[_id] = document(workspace_id, item, chunk.chunk_no)
        for _id, reason in self._bulk(index, actions).items():
            outcome.failed.setdefault(owner[_id], reason)
        if expected:
            claimed = {i.record.id: i for i in items if i.record.id in expected and i.record.id not in outcome.failed}
            self._settle(workspace_id, claimed)
        for item in items:
            outcome.ids.append(item.record.id)
            if item.record.id not in outcome.failed:
                is_update = doc_id(workspace_id, item.record.id, 0) in existing
                (outcome.updated if is_update else outcome.created).append(item.record.id)
        rewritten = [(i.record.id, len(i.chunks)) for i in items if i.record.id in outcome.updated]
        refused = [i for i in outcome.failed if doc_id(workspace_id, i, 0) not in existing]
        if rewritten or refused:
            query = leftover_chunks_query(workspace_id, rewritten, refused)
            self._call(
                self._client.delete_by_query, index=index, body={"query": query}, refresh=self._refresh != "false"
            )
        return outcome

    def _claim(
        self,
        workspace_id: str,
        items: Sequence[IndexedObservation],
        expected: Mapping[str, Mapping[str, object] | None],
        firsts: list[dict[str, Any]],
        failed: dict[str, str],
    ) -> tuple[list[IndexedObservation], list[str]]:
        """Write chunk 0 of the items named in ``expected`` conditionally on the version of the
        chunk 0 read (``firsts``, from an ``mget``) whose state is the one expected; the items
        to write the rest of, and the stale ids. Refused chunk 0s go to ``failed``."""
        versions: dict[str, dict[str, Any]] = {}
        stale: list[str] = []
        for doc in firsts:
            if doc.get("found") and doc["_source"].get("workspace_id") == workspace_id:
                record = record_of(doc["_source"], doc["_source"].get("content", ""))
                versions[record.id] = {"if_seq_no": doc["_seq_no"], "if_primary_term": doc["_primary_term"]}
                if record.id in expected and not holds(record, expected[record.id]):
                    stale.append(record.id)
        stale += [i for i, state in expected.items() if state is not None and i not in versions]
        latest = {item.record.id: item for item in items if item.record.id in expected and item.record.id not in stale}
        actions = {doc_id(workspace_id, i, 0): document(workspace_id, item, 0) for i, item in latest.items()}
        conditions = {doc_id(workspace_id, i, 0): versions.get(i, {"create": True}) for i in latest}
        conflicts: set[str] = set()
        index = self._index_of(workspace_id)
        for _id, reason in self._bulk(index, actions, conditions=conditions, conflicts=conflicts).items():
            failed.setdefault(observation_of(_id, workspace_id), reason)
        stale += [observation_of(_id, workspace_id) for _id in conflicts]
        lost = set(stale) | set(failed)
        return [item for item in items if item.record.id not in lost], sorted(set(stale))

    def chunk_vectors(
        self, workspace_id: str, model_id: str, chunks: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], Sequence[float]]:
        """The vectors ``model_id`` made of these (observation id, chunk number) chunks (one mget)."""
        keys = list(dict.fromkeys(chunks))
        if not keys:
            return {}
        reply = self._call(
            self._client.mget,
            index=self._index_of(workspace_id),
            body={"ids": [doc_id(workspace_id, observation_id, n) for observation_id, n in keys]},
            _source_includes=["embedding", "model_id", "workspace_id"],
        )
        return {
            key: doc["_source"]["embedding"]
            for key, doc in zip(keys, reply["docs"], strict=True)
            if doc.get("found")
            and doc["_source"].get("workspace_id") == workspace_id
            and doc["_source"].get("model_id") == model_id
            and "embedding" in doc["_source"]
        }

    def facets(self, workspace_id: str, flt: Filter, limit: int) -> FacetCounts:
        """Counts by value of each list field (see the ``Store`` protocol): one request
        (``dsl.facets_body``)."""
        body = facets_body(workspace_id, flt, limit)
        reply = self._call(self._client.search, index=self._index_of(workspace_id), body=body)
        return facet_counts(reply["aggregations"])

    @overload
    def delete(self, workspace_id: str, target: str) -> bool: ...

    @overload
    def delete(self, workspace_id: str, target: Find) -> int: ...

    def delete(self, workspace_id: str, target: str | Find) -> bool | int:
        """Delete every chunk of the observation (by id) or of the records a ``Find`` matches,
        ``purge_slice`` chunks a request (one synchronous request for all of them outlives any
        client timeout once the index is large); returns how many observations went."""
        index = self._index_of(workspace_id)
        if isinstance(target, str):
            query: dict[str, Any] = {
                "bool": {"filter": [{"term": {"workspace_id": workspace_id}}, {"term": {"observation_id": target}}]}
            }
            reply = self._call(self._client.delete_by_query, index=index, body={"query": query}, refresh=True)
            return int(reply.get("deleted", 0)) > 0
        records = self.count(workspace_id, target)
        query = find_query(workspace_id, target, every_chunk=True)
        while True:
            # Refreshed after each slice, so the next one does not find what this one deleted.
            reply = self._call(
                self._client.delete_by_query,
                index=index,
                body={"query": query},
                max_docs=self._purge_slice,
                conflicts="proceed",
                refresh=True,
            )
            if int(reply.get("deleted", 0)) < self._purge_slice:
                return records

    # ------------------------------------------------------------------ reads

    def read(self, workspace_id: str, observation_ids: Sequence[str]) -> dict[str, ObservationRecord]:
        """The observations of this workspace among ``observation_ids`` (their chunk 0s, one mget)."""
        ids = list(dict.fromkeys(observation_ids))
        if not ids:
            return {}
        firsts = [doc_id(workspace_id, i, 0) for i in ids]
        reply = self._call(self._client.mget, index=self._index_of(workspace_id), body={"ids": firsts})
        records = [
            record_of(d["_source"], d["_source"].get("content", ""))
            for d in reply["docs"]
            if d.get("found") and d["_source"].get("workspace_id") == workspace_id
        ]
        return {record.id: record for record in records}

    def find(self, workspace_id: str, query: Find) -> list[ObservationRecord]:
        """The records (chunk 0s) of the workspace ``query`` matches, in its order, paged."""
        page = MARK_PAGE if query.limit is None else min(MARK_PAGE, query.limit)
        return self._paged(workspace_id, find_body(workspace_id, query, page), query.limit)

    def _paged(self, workspace_id: str, body: dict[str, Any], limit: int | None) -> list[ObservationRecord]:
        """The records of a sorted search of chunk 0s (``body``, whose ``size`` is a page), page
        after page (``search_after``) until ``limit`` or the last."""
        found: list[ObservationRecord] = []
        while hits := self._call(self._client.search, index=self._index_of(workspace_id), body=body)["hits"]["hits"]:
            found += [
                record_of(h["_source"], h["_source"].get("content", ""))
                for h in hits
                if h["_source"].get("workspace_id") == workspace_id
            ]
            if limit is not None and len(found) >= limit:
                return found[:limit]
            if len(hits) < body["size"]:
                break
            body["search_after"] = hits[-1]["sort"]
        return found

    @overload
    def count(self, workspace_id: str, query: Find | None = None) -> int: ...

    @overload
    def count(self, workspace_id: str | None, query: Find | None = None, *, by: str) -> dict[str, int]: ...

    def count(
        self, workspace_id: str | None, query: Find | None = None, *, by: str | None = None
    ) -> int | dict[str, int]:
        """Chunk 0s (one per observation) ``query`` matches: a count, or a composite aggregation
        by ``by``, page after page (every workspace's, through the alias over all of them)."""
        check_count(workspace_id, by)
        index = self._all if workspace_id is None else self._index_of(workspace_id)
        query_ = find_query(workspace_id, query or Find())
        if by is None:
            return int(self._call(self._client.count, index=index, body={"query": query_})["count"])
        counts: dict[str, int] = {}
        composite: dict[str, Any] = {"size": COUNT_PAGE, "sources": [{"value": {"terms": {"field": by}}}]}
        while True:
            body = {"query": query_, "size": 0, "aggs": {"by": {"composite": composite}}}
            found = self._call(self._client.search, index=index, body=body).get("aggregations", {}).get("by", {})
            counts |= {str(b["key"]["value"]): int(b["doc_count"]) for b in found.get("buckets", [])}
            if len(found.get("buckets", [])) < COUNT_PAGE or "after_key" not in found:
                return counts
            composite["after"] = found["after_key"]

    def retrieve(
        self,
        workspace_id: str,
        *,
        text: str | None,
        vector: Vector | None,
        model_id: str | None,
        flt: Filter,
        limit: int,
    ) -> Retrieved:
        """Both retrievers in one ``_msearch`` under one filter list (workspace first): ``retrieval.py``."""
        filters: list[dict[str, Any]] = [{"term": {"workspace_id": workspace_id}}, *render_opensearch(flt)]
        return retrieve_hits(
            partial(self._call, self._client.msearch),
            partial(self._call, self._client.mget),
            self._index_of(workspace_id),
            workspace_id,
            filters,
            text=text,
            vector=vector,
            model_id=model_id,
            limit=limit,
        )

    def search(self, workspace_id: str | None, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The hits of one search ``body`` in the workspace's index (every workspace's, with None):
        this backend's own reads beside the port (``scan.py``, ``stored_vectors.py``)."""
        index = self._all if workspace_id is None else self._index_of(workspace_id)
        hits: list[dict[str, Any]] = self._call(self._client.search, index=index, body=body)["hits"]["hits"]
        return hits

    def _call(self, method: Any, **kwargs: Any) -> Any:
        """One client call; every transport failure becomes a domain error (``domain_error``)."""
        from opensearchpy.exceptions import ConnectionError as OsConnectionError
        from opensearchpy.exceptions import ConnectionTimeout, TransportError

        if getattr(method, "__name__", "") in _READS and not self._single:
            # A workspace that never wrote has no index yet: its reads find nothing (and so does
            # maintenance before any workspace wrote), rather than failing.
            kwargs.setdefault("ignore_unavailable", True)
        try:
            return method(**kwargs)
        except (OsConnectionError, ConnectionTimeout) as exc:
            raise BackendUnavailable(f"OpenSearch unreachable: {type(exc).__name__}") from exc
        except TransportError as exc:
            if getattr(method, "__name__", "") == "mget" and not self._single and _index_missing(exc):
                # mget takes no ignore_unavailable: a workspace without an index holds none of these
                return {"docs": [{"_id": _id, "found": False} for _id in kwargs["body"]["ids"]]}
            raise domain_error(exc.status_code, exc.info, str(kwargs.get("index", self._index))) from exc


def _index_missing(exc: Any) -> bool:
    """Whether an error reply says the index (or alias) does not exist."""
    return bool(exc.status_code == 404 and "index_not_found" in json.dumps(exc.info, default=str))
