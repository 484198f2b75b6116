"""The OpenSearch index's settings and mappings (one document per chunk; keyword fields for every
filter, English text, faiss HNSW, BM25 as the embedded store computes it) and their schema version."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from neural_memory.domain import bm25
from neural_memory.stores.record_fields import RECORD_FIELDS

# 2: metadata_terms, supersedes, superseded_by; 3: BM25 k1/b. A new version makes every deploy
# reindex (the live index is replaced); while it runs, writes still go to the old index, whose
# strict mapping would refuse a new field. So a field is added in place instead (below), and the
# version moves only for what cannot be (a changed type, analyzer or similarity).
SCHEMA_VERSION = 3
# Fields an index of the same schema version takes in place (``OpenSearchAdmin`` puts them into
# the live index's mapping at every bootstrap, before any function that writes them is deployed:
# the stack makes those depend on the bootstrap, which re-runs when ``fingerprint`` changes). A
# document written without one loses nothing, so no reindex is forced. Each is a plain field
# (keyword, date, long, unindexed text): ``put_mapping`` adds those to an existing index.
ADDED_IN_PLACE = (
    # what a chunk's vector was made of, the embedding cache's key (stored_vectors.py)
    "embedding_hash",
    # the code an observation is about, and the later push that touched it (engineering.staleness)
    "code_refs",
    "possibly_stale",
    "stale_at",
    # the tier lifecycle (ingest/lifecycle.py)
    "promoted_at",
    "promoted_by",
    "promotion_reason",
    "citations",
    "recurrence_key",
    "embedded_at",
    "archived_at",
    # what redaction took out (redaction/observations.py)
    "redactions",
    # who wrote it: the key's name (auth/roles.py)
    "created_by",
    # how far its writer is trusted, and what a person should review (trust/)
    "trust",
    "flags",
)
HNSW_M = 16  # graph degree: recall vs memory
HNSW_EF_CONSTRUCTION = 128  # build-time beam: recall vs indexing speed
HNSW_EF_SEARCH = 100  # query-time beam: recall vs latency

# Document fields that are not record fields: the chunk's own, and the record's id under another
# name (``_id`` is the chunk's).
DOC_NAMES = {"id": "observation_id"}
TYPES: dict[str, dict[str, Any]] = {
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


def similarity() -> dict[str, Any]:
    """The index's default similarity: BM25 with the embedded store's k1 and b."""
    return {"default": {"type": "BM25", "k1": bm25.K1, "b": bm25.B}}


def index_body(dimension: int, model_id: str, shards: int = 1, replicas: int = 1) -> dict[str, Any]:
    """Settings and mappings of the index (keyword fields for every filter, English text, faiss HNSW,
    BM25 as the embedded store computes it); shards and replicas explicit (a single-node domain with
    a replica is yellow for good)."""
    keyword = {"type": "keyword"}
    return {
        "settings": {
            "index": {
                "knn": True,
                "knn.algo_param.ef_search": HNSW_EF_SEARCH,
                "number_of_shards": shards,
                "number_of_replicas": replicas,
                "similarity": similarity(),
            }
        },
        "mappings": {
            "_meta": {"schema_version": SCHEMA_VERSION, "model_id": model_id, "dimension": dimension},
            "dynamic": "strict",
            "properties": {
                **{DOC_NAMES.get(f.name, f.name): TYPES[f.kind] for f in RECORD_FIELDS},
                "workspace_id": keyword,
                "model_id": keyword,
                "chunk_no": {"type": "integer"},
                "text": TYPES["text"],
                "metadata_terms": keyword,  # metadata filters (filters.metadata_terms)
                "embedding_hash": keyword,  # ADDED_IN_PLACE
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


def fingerprint() -> str:
    """A short hash of the index's field mapping (its dimension aside, which the model names): it
    changes with any field, so a deploy that adds one re-runs the index bootstrap."""
    properties = index_body(1, "none")["mappings"]["properties"]
    return hashlib.sha256(json.dumps(properties, sort_keys=True).encode()).hexdigest()[:16]
