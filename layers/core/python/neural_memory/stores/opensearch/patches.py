"""The OpenSearch store's changes in place (``OpenSearchStore`` is this class with its writes and
reads): a patch's fields and a lifecycle mark set on every chunk of an observation, a page of
``MARK_PAGE`` chunks at a time, chunk 0 first and conditionally on the version read when the
caller expects its values; and the marks a write copies from chunk 0 onto the later chunks it
wrote from an older copy."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.domain.record_rules import LIFECYCLE_FIELDS, lifecycle_state
from neural_memory.errors import StoreRejected
from neural_memory.stores.base import IndexedObservation, Patched
from neural_memory.stores.find import Matching
from neural_memory.stores.opensearch.documents import doc_id, observation_of, patch_doc, record_of
from neural_memory.stores.opensearch.dsl import find_query
from neural_memory.stores.opensearch.mapping import DOC_NAMES
from neural_memory.stores.record_fields import RECORD_FIELDS

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from neural_memory.models import ObservationRecord
    from neural_memory.stores.opensearch.bulk import Bulk

MARK_PAGE = 5_000  # chunks read per request when marking an observation's chunks superseded


class OpenSearchPatches:
    """The patches and lifecycle marks of ``OpenSearchStore``, through its client and bulk writer."""

    _client: Any
    _bulk: Bulk

    if TYPE_CHECKING:

        def _index_of(self, workspace_id: str) -> str: ...

        def _call(self, method: Any, **kwargs: Any) -> Any: ...

        def read(self, workspace_id: str, observation_ids: Sequence[str]) -> dict[str, ObservationRecord]: ...

    def patch(
        self,
        workspace_id: str,
        changes: Mapping[str, Mapping[str, object]] | Matching,
        expected: Mapping[str, Mapping[str, object]] | None = None,
    ) -> Patched:
        """Set (or clear, with None: a promoted observation's ``expires_at`` stops matching the
        TTL filter) ``PATCHED_FIELDS`` on every chunk of these observations. With ``expected``,
        chunk 0 (the record) is updated first, conditionally on the version whose values were
        compared (``if_seq_no``/``if_primary_term``): of racing writers one wins, the others find
        the record in ``changed``; its other chunks follow."""
        index = self._index_of(workspace_id)
        if isinstance(changes, Matching):
            query = find_query(workspace_id, changes.find, every_chunk=True)
            doc = patch_doc(changes.fields)
            return Patched(ids=self._update_chunks(index, query, lambda _: doc))
        docs = {i: patch_doc(fields) for i, fields in changes.items()}
        outcome = Patched()
        conditional = [i for i in docs if expected and i in expected]
        if conditional and expected:
            self._patch_first(workspace_id, {i: docs[i] for i in conditional}, expected, outcome)
        # The conditioned ids' chunk 0s are written: their other chunks follow (never chunk 0
        # again, which a later writer may have changed since).
        written = list(outcome.ids)
        for ids, from_chunk in (([i for i in docs if i not in conditional], 0), (written, 1)):
            for start in range(0, len(ids), MARK_PAGE):
                filters = [
                    {"term": {"workspace_id": workspace_id}},
                    {"terms": {"observation_id": ids[start : start + MARK_PAGE]}},
                    {"range": {"chunk_no": {"gte": from_chunk}}},
                ]
                found = self._update_chunks(index, {"bool": {"filter": filters}}, docs.__getitem__)
                if from_chunk == 0:
                    outcome.ids += found
        return outcome

    def _patch_first(
        self,
        workspace_id: str,
        docs: Mapping[str, dict[str, Any]],
        expected: Mapping[str, Mapping[str, object]],
        outcome: Patched,
    ) -> None:
        """Update the chunk 0s of ``docs`` whose record holds the values ``expected``,
        conditionally on the version read; the others (and the losers of a race) go to
        ``outcome.changed`` as they now stand, the written to ``outcome.ids``; absent ids to neither."""
        index = self._index_of(workspace_id)
        firsts = [doc_id(workspace_id, i, 0) for i in docs]
        found = self._call(self._client.mget, index=index, body={"ids": firsts})["docs"]
        actions: dict[str, dict[str, Any]] = {}
        versions: dict[str, dict[str, Any]] = {}
        for doc in found:
            if not doc.get("found") or doc["_source"].get("workspace_id") != workspace_id:
                continue
            record = record_of(doc["_source"], doc["_source"].get("content", ""))
            if any(getattr(record, name) != value for name, value in expected[record.id].items()):
                outcome.changed[record.id] = record
                continue
            actions[doc["_id"]] = docs[record.id]
            versions[doc["_id"]] = {"if_seq_no": doc["_seq_no"], "if_primary_term": doc["_primary_term"]}
        conflicts: set[str] = set()
        refused = self._bulk(index, actions, op="update", conditions=versions, conflicts=conflicts)
        if refused:
            raise StoreRejected("OpenSearch refused lifecycle marks: " + "; ".join(list(refused.values())[:5]))
        lost = [observation_of(_id, workspace_id) for _id in sorted(conflicts)]
        outcome.changed |= self.read(workspace_id, lost)
        outcome.ids += [observation_of(_id, workspace_id) for _id in actions if _id not in conflicts]

    def _update_chunks(self, index: str, query: dict[str, Any], doc: Callable[[str], dict[str, Any]]) -> list[str]:
        """Set the fields of ``doc`` (by observation id) on every chunk matching ``query`` in ``index`` (an alias over
        several: each chunk is updated in the index the search found it in), a page of ``MARK_PAGE`` at a
        time (an observation may have hundreds); returns the observations whose chunk 0 changed."""
        body: dict[str, Any] = {
            "query": query,
            "size": MARK_PAGE,
            "_source": ["workspace_id", "observation_id", "chunk_no"],
            "sort": [{"workspace_id": "asc"}, {"observation_id": "asc"}, {"chunk_no": "asc"}],
        }
        changed: list[str] = []
        while hits := self._call(self._client.search, index=index, body=body)["hits"]["hits"]:
            found: dict[str, dict[str, dict[str, Any]]] = {}
            for h in hits:
                found.setdefault(h["_index"], {})[h["_id"]] = doc(h["_source"]["observation_id"])
            refused = {k: v for name, marks in found.items() for k, v in self._bulk(name, marks, op="update").items()}
            if refused:
                raise StoreRejected("OpenSearch refused lifecycle marks: " + "; ".join(list(refused.values())[:5]))
            changed += [str(h["_source"]["observation_id"]) for h in hits if h["_source"].get("chunk_no") == 0]
            body["search_after"] = hits[-1]["sort"]
        return changed

    def _settle(self, workspace_id: str, written: Mapping[str, IndexedObservation]) -> None:
        """After chunk 0 was claimed and the other chunks written from the same copy: a lifecycle
        change (a promotion, an archive, a supersession mark) that reached chunk 0 in between, but
        perhaps not every later chunk, is copied from chunk 0 onto them."""
        now = self.read(workspace_id, list(written))
        marks: dict[str, dict[str, Any]] = {}
        for observation_id, item in written.items():
            record = now.get(observation_id)
            if record is None or lifecycle_state(record) == lifecycle_state(item.record):
                continue
            names = LIFECYCLE_FIELDS | {"superseded_by"}
            doc = {
                DOC_NAMES.get(f.name, f.name): f.to_document(getattr(record, f.name))
                for f in RECORD_FIELDS
                if f.name in names
            }
            marks |= {doc_id(workspace_id, observation_id, c.chunk_no): doc for c in item.chunks if c.chunk_no > 0}
        if marks and (refused := self._bulk(self._index_of(workspace_id), marks, op="update")):
            raise StoreRejected("OpenSearch refused lifecycle marks: " + "; ".join(list(refused.values())[:5]))
