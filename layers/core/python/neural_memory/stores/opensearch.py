"""The production store: an OpenSearch k-NN index, one document per chunk.

- Document ``_id`` = ``{workspace}:{observation id}:{chunk}``: a retried or replayed upsert
  overwrites in place. Chunk 0 also carries the parent's full text (not indexed), so results
  are rebuilt by one batch ``mget`` of their parents.
- k-NN uses the faiss engine, HNSW, ``innerproduct`` on unit vectors (= cosine); the filter
  goes *inside* the ``knn`` clause (efficient filtering, still ``k`` results), ``size`` is set
  explicitly. Lexical is a ``multi_match`` (never query-string syntax) under the same filter;
  both go out in one ``_msearch``. If k-NN fails while lexical answers, the search answers
  from lexical and says so in ``degraded``.
- Scores follow the ``Store`` contract: faiss inner-product ``_score`` is mapped back to cosine
  (``score - 1`` above 1, ``1 - 1/score`` below) and clipped to [0, 1]; BM25 is divided by the
  query's best.
- Index creation and mapping checks live on ``OpenSearchAdmin`` (used by the maintenance
  function and ``serve``), never in a constructor.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from neural_memory.clock import to_iso
from neural_memory.errors import BackendUnavailable, ConfigurationError, NeuralMemoryError
from neural_memory.filters import metadata_terms, render_opensearch
from neural_memory.models import Hit, ObservationRecord, Retrieved, UpsertOutcome
from neural_memory.stores.base import KNOWN_FIELDS
from neural_memory.stores.record_fields import RECORD_FIELDS

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from neural_memory.filters import Filter
    from neural_memory.models import Vector
    from neural_memory.stores.base import IndexedObservation

SCHEMA_VERSION = 2  # 2: metadata_terms, supersedes, superseded_by
HNSW_M = 16  # graph degree: recall vs memory
HNSW_EF_CONSTRUCTION = 128  # build-time beam: recall vs indexing speed
HNSW_EF_SEARCH = 100  # query-time beam: recall vs latency
RETRYABLE = {429, 500, 502, 503, 504}
_NO_EMBEDDING = {"excludes": ["embedding"]}
# Document fields that are not record fields: the chunk's own, and the record's id under another
# name (``_id`` is the chunk's).
_DOC_NAMES = {"id": "observation_id"}
_TYPES: dict[str, dict[str, Any]] = {
    "keyword": {"type": "keyword"},
    "keywords": {"type": "keyword"},
    "text": {"type": "text", "analyzer": "english"},
    "stored": {"type": "text", "index": False},
    "time": {"type": "date"},
    "json": {"type": "object", "enabled": False},
    "integer": {"type": "long"},
    "float": {"type": "double"},
    "boolean": {"type": "boolean"},
}


class StoreRejected(NeuralMemoryError):
    """OpenSearch refused documents for a reason a retry cannot fix (the message lists them)."""

    code = "store_rejected"


def doc_id(workspace_id: str, observation_id: str, chunk_no: int) -> str:
    """The deterministic document id of one chunk."""
    return f"{workspace_id}:{observation_id}:{chunk_no}"


def index_body(dimension: int, model_id: str) -> dict[str, Any]:
    """Settings and mappings of the index (keyword fields for every filter, English text, faiss HNSW)."""
    keyword = {"type": "keyword"}
    return {
        "settings": {"index": {"knn": True, "knn.algo_param.ef_search": HNSW_EF_SEARCH}},
        "mappings": {
            "_meta": {"schema_version": SCHEMA_VERSION, "model_id": model_id, "dimension": dimension},
            "dynamic": "strict",
            "properties": {
                **{_DOC_NAMES.get(f.name, f.name): _TYPES[f.kind] for f in RECORD_FIELDS},
                "workspace_id": keyword,
                "model_id": keyword,
                "chunk_no": {"type": "integer"},
                "text": _TYPES["text"],
                "metadata_terms": keyword,  # metadata filters (filters.metadata_terms)
                "embedding": {
                    "type": "knn_vector",
                    "dimension": dimension,
                    "method": {
                        "name": "hnsw",
                        "engine": "faiss",
                        "space_type": "innerproduct",
                        "parameters": {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
                    },
                },
            },
        },
    }


def lexical_body(text: str, filters: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    """BM25 over title (×2) and text, any word, under the filters."""
    return {
        "size": limit,
        "_source": _NO_EMBEDDING,
        "query": {
            "bool": {
                "must": [{"multi_match": {"query": text, "fields": ["title^2", "text"], "operator": "or"}}],
                "filter": filters,
            }
        },
    }


def knn_body(vector: Vector, filters: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    """k-NN with the filter inside the ``knn`` clause (efficient filtering) and an explicit ``size``."""
    return {
        "size": limit,
        "_source": _NO_EMBEDDING,
        "query": {"knn": {"embedding": {"vector": list(vector), "k": limit, "filter": {"bool": {"filter": filters}}}}},
    }


def cosine_from_score(score: float) -> float:
    """Undo faiss inner-product scoring (``1 + ip`` for ip >= 0, ``1 / (1 - ip)`` below) and clip."""
    cosine = score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score if score > 0 else -1.0
    return min(1.0, max(0.0, cosine))


class OpenSearchAdmin:
    """Index management: create if absent, verify the mapping's version, model and dimension."""

    def __init__(self, client: Any, index: str) -> None:
        self._client = client
        self._index = index

    def ensure_index(self, dimension: int, model_id: str) -> str:
        """``created`` or ``ok``; raises ``ConfigurationError`` when the index was built for another
        model, dimension or schema version (reindexing is needed, never silent mixing)."""
        if not self._client.indices.exists(index=self._index):
            self._client.indices.create(index=self._index, body=index_body(dimension, model_id))
            return "created"
        mapping = self._client.indices.get_mapping(index=self._index)
        meta = next(iter(mapping.values()))["mappings"].get("_meta", {})
        expected = {"schema_version": SCHEMA_VERSION, "model_id": model_id, "dimension": dimension}
        found = {key: meta.get(key) for key in expected}
        if found != expected:
            raise ConfigurationError(f"index {self._index!r} was built for {found}, this service needs {expected}")
        return "ok"


class OpenSearchStore:
    """``Store`` over one OpenSearch index (see the module docstring)."""

    def __init__(self, client: Any, index: str, refresh: str = "false", max_retries: int = 3) -> None:
        self._client = client
        self._index = index
        self._refresh = refresh
        self._max_retries = max_retries

    # ------------------------------------------------------------------ writes

    def upsert(self, workspace_id: str, items: Sequence[IndexedObservation]) -> UpsertOutcome:
        """Bulk-index every chunk; retry only retryable item failures; drop chunks a shorter new
        version no longer has."""
        outcome = UpsertOutcome()
        if not items:
            return outcome
        firsts = [doc_id(workspace_id, item.record.id, 0) for item in items]
        found = self._call(self._client.mget, index=self._index, body={"ids": firsts}, _source=False)
        existing = {doc["_id"] for doc in found["docs"] if doc.get("found")}
        actions: dict[str, dict[str, Any]] = {}
        for item in items:
            outcome.ids.append(item.record.id)
            is_update = doc_id(workspace_id, item.record.id, 0) in existing
            (outcome.updated if is_update else outcome.created).append(item.record.id)
            for chunk in item.chunks:
                actions[doc_id(workspace_id, item.record.id, chunk.chunk_no)] = self._document(
                    workspace_id, item, chunk.chunk_no
                )
        self._bulk(actions)
        stale = [
            {
                "bool": {
                    "filter": [
                        {"term": {"observation_id": i.record.id}},
                        {"range": {"chunk_no": {"gte": len(i.chunks)}}},
                    ]
                }
            }
            for i in items
            if doc_id(workspace_id, i.record.id, 0) in existing
        ]
        if stale:
            query = {
                "bool": {
                    "filter": [{"term": {"workspace_id": workspace_id}}],
                    "should": stale,
                    "minimum_should_match": 1,
                }
            }
            self._call(
                self._client.delete_by_query, index=self._index, body={"query": query}, refresh=self._refresh != "false"
            )
        return outcome

    @staticmethod
    def _document(workspace_id: str, item: IndexedObservation, chunk_no: int) -> dict[str, Any]:
        rec, chunk = item.record, item.chunks[chunk_no]
        doc: dict[str, Any] = {
            _DOC_NAMES.get(f.name, f.name): f.to_document(getattr(rec, f.name))
            for f in RECORD_FIELDS
            if getattr(rec, f.name) is not None and (f.name != "content" or chunk_no == 0)
        }
        doc |= {"workspace_id": workspace_id, "chunk_no": chunk_no, "text": chunk.text}
        if terms := metadata_terms(rec.metadata):
            doc["metadata_terms"] = terms
        if chunk.vector is not None:
            doc["embedding"] = chunk.vector
            doc["model_id"] = item.model_id
        return doc

    def _bulk(self, actions: dict[str, dict[str, Any]], op: str = "index") -> None:
        """``index`` whole documents, or ``update`` some of their fields, by document id."""
        pending = dict(actions)
        if not pending:
            return
        for attempt in range(self._max_retries + 1):
            lines: list[dict[str, Any]] = []
            for _id, doc in pending.items():
                lines += [{op: {"_index": self._index, "_id": _id}}, doc if op == "index" else {"doc": doc}]
            reply = self._call(self._client.bulk, index=self._index, body=lines, refresh=self._refresh)
            if not reply.get("errors"):
                return
            retry, fatal = {}, []
            for entry in reply["items"]:
                result = next(iter(entry.values()))
                if result.get("status", 200) < 300:
                    continue
                if result.get("status") in RETRYABLE:
                    retry[result["_id"]] = pending[result["_id"]]
                else:
                    fatal.append(f"{result['_id']}: {result.get('error', {}).get('reason', result.get('status'))}")
            if fatal:
                raise StoreRejected("OpenSearch rejected documents: " + "; ".join(fatal[:5]))
            pending = retry
            if attempt < self._max_retries:
                time.sleep(0.2 * 2**attempt)
        raise BackendUnavailable(f"OpenSearch kept refusing {len(pending)} documents (throttled or unavailable)")

    def chunk_vectors(
        self, workspace_id: str, model_id: str, chunks: Sequence[tuple[str, int]]
    ) -> dict[tuple[str, int], Sequence[float]]:
        """The vectors ``model_id`` made of these (observation id, chunk number) chunks (one mget)."""
        keys = list(dict.fromkeys(chunks))
        if not keys:
            return {}
        reply = self._call(
            self._client.mget,
            index=self._index,
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

    def known_values(self, workspace_id: str, limit: int) -> dict[str, list[str]]:
        """Distinct values by field, the most frequent first (terms aggregations over chunk 0s)."""
        query = {"bool": {"filter": [{"term": {"workspace_id": workspace_id}}, {"term": {"chunk_no": 0}}]}}
        aggs = {field: {"terms": {"field": field, "size": limit}} for field in KNOWN_FIELDS}
        reply = self._call(self._client.search, index=self._index, body={"query": query, "size": 0, "aggs": aggs})
        return {field: [str(b["key"]) for b in reply["aggregations"][field]["buckets"]] for field in KNOWN_FIELDS}

    def superseders(self, workspace_id: str, ids: Sequence[str]) -> dict[str, list[str]]:
        """For each of ``ids`` that stored observations list in ``supersedes``, their ids, the
        latest to occur first."""
        if not ids:
            return {}
        query = {
            "bool": {
                "filter": [
                    {"term": {"workspace_id": workspace_id}},
                    {"term": {"chunk_no": 0}},
                    {"terms": {"supersedes": list(ids)}},
                ]
            }
        }
        body = {"query": query, "size": 10_000, "_source": ["observation_id", "supersedes", "occurred_at"]}
        hits = self._call(self._client.search, index=self._index, body=body)["hits"]["hits"]
        found: dict[str, list[str]] = {}
        newest_first = sorted(
            hits, key=lambda h: (h["_source"]["occurred_at"], h["_source"]["observation_id"]), reverse=True
        )
        for hit in newest_first:
            source = hit["_source"]
            for target in source["supersedes"]:
                if target in ids:
                    found.setdefault(target, []).append(source["observation_id"])
        return found

    def set_superseded_by(self, workspace_id: str, changes: Mapping[str, str | None]) -> None:
        """Set (or clear, with None) ``superseded_by`` on every chunk of these observations."""
        if not changes:
            return
        query = {
            "bool": {"filter": [{"term": {"workspace_id": workspace_id}}, {"terms": {"observation_id": list(changes)}}]}
        }
        body = {"query": query, "size": 10_000, "_source": ["observation_id"]}
        hits = self._call(self._client.search, index=self._index, body=body)["hits"]["hits"]
        self._bulk({h["_id"]: {"superseded_by": changes[h["_source"]["observation_id"]]} for h in hits}, op="update")

    def delete(self, workspace_id: str, observation_id: str) -> bool:
        """Delete every chunk of the observation in this workspace."""
        query = {
            "bool": {"filter": [{"term": {"workspace_id": workspace_id}}, {"term": {"observation_id": observation_id}}]}
        }
        reply = self._call(self._client.delete_by_query, index=self._index, body={"query": query}, refresh=True)
        return int(reply.get("deleted", 0)) > 0

    def expiring_links(self, now: datetime) -> dict[str, list[str]]:
        """By workspace, the ids superseded by observations expired at ``now`` (their chunk 0s)."""
        query = {
            "bool": {
                "filter": [
                    {"term": {"chunk_no": 0}},
                    {"exists": {"field": "supersedes"}},
                    {"range": {"expires_at": {"lte": to_iso(now)}}},
                ]
            }
        }
        body = {"query": query, "size": 10_000, "_source": ["workspace_id", "supersedes"]}
        found: dict[str, list[str]] = {}
        for hit in self._call(self._client.search, index=self._index, body=body)["hits"]["hits"]:
            found.setdefault(hit["_source"]["workspace_id"], []).extend(hit["_source"]["supersedes"])
        return found

    def purge_expired(self, now: datetime) -> int:
        """Delete expired chunks of every workspace; returns how many observations went."""
        query = {"range": {"expires_at": {"lte": to_iso(now)}}}
        parents = self._call(
            self._client.count,
            index=self._index,
            body={"query": {"bool": {"filter": [query, {"term": {"chunk_no": 0}}]}}},
        )
        self._call(self._client.delete_by_query, index=self._index, body={"query": query}, refresh=True)
        return int(parents["count"])

    # ------------------------------------------------------------------ reads

    def get(self, workspace_id: str, observation_id: str) -> ObservationRecord | None:
        """Chunk 0 holds the record and the full text."""
        reply = self._call(
            self._client.mget, index=self._index, body={"ids": [doc_id(workspace_id, observation_id, 0)]}
        )
        doc = reply["docs"][0]
        if not doc.get("found") or doc["_source"].get("workspace_id") != workspace_id:
            return None
        return _record(doc["_source"], doc["_source"].get("content", ""))

    def get_many(self, workspace_id: str, observation_ids: Sequence[str]) -> dict[str, ObservationRecord]:
        """The observations of this workspace among ``observation_ids`` (their chunk 0s, one mget)."""
        ids = list(dict.fromkeys(observation_ids))
        if not ids:
            return {}
        firsts = [doc_id(workspace_id, i, 0) for i in ids]
        reply = self._call(self._client.mget, index=self._index, body={"ids": firsts})
        records = [
            _record(d["_source"], d["_source"].get("content", ""))
            for d in reply["docs"]
            if d.get("found") and d["_source"].get("workspace_id") == workspace_id
        ]
        return {record.id: record for record in records}

    def count(self, workspace_id: str) -> int:
        """Observations (chunk-0 documents) of the workspace."""
        query = {"bool": {"filter": [{"term": {"workspace_id": workspace_id}}, {"term": {"chunk_no": 0}}]}}
        return int(self._call(self._client.count, index=self._index, body={"query": query})["count"])

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
        """Both retrievers in one ``_msearch`` under one filter list (workspace first)."""
        filters: list[dict[str, Any]] = [{"term": {"workspace_id": workspace_id}}, *render_opensearch(flt)]
        kinds: list[str] = []
        lines: list[dict[str, Any]] = []
        if text:
            kinds.append("lexical")
            lines += [{"index": self._index}, lexical_body(text, filters, limit)]
        if vector is not None and model_id is not None:
            kinds.append("vector")
            lines += [{"index": self._index}, knn_body(vector, filters, limit)]
        if not kinds:
            return Retrieved()
        # The index in the path (not only in each header line) scopes the request for IAM grants.
        reply = self._call(self._client.msearch, index=self._index, body=lines)
        result = Retrieved()
        failed: dict[str, str] = {}
        for kind, response in zip(kinds, reply["responses"], strict=True):
            if "error" in response:
                error = response["error"]
                failed[kind] = str(error.get("reason") if isinstance(error, dict) else error)
                continue
            hits = response["hits"]["hits"]
            if kind == "lexical":
                best = max((float(h["_score"]) for h in hits), default=1.0) or 1.0
                result.lexical = self._hits(workspace_id, hits, lambda s, best=best: s / best)
            else:
                result.vector = self._hits(workspace_id, hits, cosine_from_score)
        if failed and len(failed) == len(kinds):
            raise BackendUnavailable(f"OpenSearch search failed: {failed}")
        result.degraded = [f"{kind}:failed ({reason})" for kind, reason in failed.items()]
        return result

    def _hits(self, workspace_id: str, hits: list[dict[str, Any]], score: Any) -> list[Hit]:
        """Hits with their parents' full text, fetched in one batch read."""
        missing = {h["_source"]["observation_id"] for h in hits if h["_source"].get("chunk_no") != 0}
        texts: dict[str, str] = {
            h["_source"]["observation_id"]: h["_source"].get("content", "")
            for h in hits
            if h["_source"].get("chunk_no") == 0
        }
        missing -= set(texts)
        if missing:
            reply = self._call(
                self._client.mget,
                index=self._index,
                body={"ids": [doc_id(workspace_id, obs_id, 0) for obs_id in sorted(missing)]},
                _source_includes=["observation_id", "content"],
            )
            texts |= {
                d["_source"]["observation_id"]: d["_source"].get("content", "") for d in reply["docs"] if d.get("found")
            }
        return [
            Hit(
                observation=_record(h["_source"], texts.get(h["_source"]["observation_id"], "")),
                chunk_no=int(h["_source"]["chunk_no"]),
                score=float(score(float(h["_score"]))),
            )
            for h in hits
            if h["_source"].get("workspace_id") == workspace_id
        ]

    @staticmethod
    def _call(method: Any, **kwargs: Any) -> Any:
        """One client call; transport failures become ``BackendUnavailable``."""
        from opensearchpy.exceptions import ConnectionError as OsConnectionError
        from opensearchpy.exceptions import ConnectionTimeout, TransportError

        try:
            return method(**kwargs)
        except (OsConnectionError, ConnectionTimeout) as exc:
            raise BackendUnavailable(f"OpenSearch unreachable: {type(exc).__name__}") from exc
        except TransportError as exc:
            if exc.status_code in RETRYABLE:
                raise BackendUnavailable(f"OpenSearch answered {exc.status_code}") from exc
            raise


def _record(source: dict[str, Any], content: str) -> ObservationRecord:
    """The record of a chunk document, with the observation's full ``content`` read from chunk 0."""
    values = {f.name: f.from_document(source.get(_DOC_NAMES.get(f.name, f.name))) for f in RECORD_FIELDS}
    return ObservationRecord(**{**values, "content": content})
