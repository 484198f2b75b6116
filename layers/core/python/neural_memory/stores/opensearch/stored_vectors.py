"""The embedding cache on AWS is the index itself: every embedded chunk document keeps the
``embedding_hash`` of the text its vector was made from (sha256 of the model id and the text), so
a rewrite of an unchanged observation, a replayed bus event, and a reindex into a new index for
the same model find the vector already stored instead of asking Cohere again.

Why the index and not a DynamoDB table beside it (US East list prices of 2025; re-check before
relying on them). Cohere embed-english-v3.0 costs $0.10 per million tokens: a passage of 128
tokens plus its title (~140 tokens) costs ~$0.000014 to embed, $14 per million chunks. A DynamoDB
on-demand cache would hold each 1024-float vector in a ~4.2 KB item: a write is 5 write units
($0.625 per million: ~$3.1 per million new chunks, paid for every chunk, hit or not), a lookup
one or two read units ($0.125 per million: ~$0.25 per million), storage $0.25 per GB-month (~$1
per million vectors every month), plus a table, its grants, its backups and a second copy of
every vector to keep consistent with the index. It saves its cost only when over ~25% of what
is written was embedded before. In the index the cache costs 64 bytes of keyword per chunk (next
to its 4 KB vector and its HNSW graph entry) and one terms query per batch on a domain that is
already paid for (a few ms against a Cohere call of 100-300 ms); it holds exactly the vectors
still stored, scoped by the same workspace filter as every other query. What it cannot do that
a table could: remember the vectors of deleted or expired observations — their text, if it
returns, is embedded again.

Lookups are searches: a write becomes visible to them at the index's next refresh (the functions
write with ``wait_for``, so an acknowledged write is), and the same text twice in one batch is
embedded once by the service itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.domain.ids import embedding_hash, text_key
from neural_memory.errors import StoreRejected
from neural_memory.observability import logger

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Vector
    from neural_memory.stores.opensearch.store import OpenSearchStore

HASHES_PER_REQUEST = 1_000  # embedding hashes one lookup asks for (a terms query)
HASH_ROUNDS = 3  # pages per lookup when copies of one text fill a page


class StoredVectors:
    """``VectorCache`` over ``OpenSearchStore`` indices, asked in order (a reindex: the old index,
    then the new one its catch-up writes to again): vectors found by ``embedding_hash``; nothing
    to put (the write that follows stores them with their chunks), nothing to close."""

    def __init__(self, *stores: OpenSearchStore) -> None:
        self._stores = stores

    def get_many(self, model_id: str, workspace_id: str, texts: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors of these texts, by ``text_key``. A lookup the domain refuses (4xx) is
        a miss, never a failed write; a domain that is down or refuses this role fails the write
        here, before the embedder is paid for it."""
        keys = {embedding_hash(model_id, text): text_key(text) for text in texts}
        found: dict[str, Vector] = {}
        for store in self._stores:
            missing = [digest for digest in keys if digest not in found]
            if not missing:
                break
            try:
                found |= vectors_by_hash(store, workspace_id, model_id, missing)
            except StoreRejected as exc:
                logger.warning("stored vectors lookup failed; embedding instead", extra={"reason": str(exc)})
        return {keys[digest]: vector for digest, vector in found.items() if digest in keys}

    def put_many(self, model_id: str, workspace_id: str, items: Sequence[tuple[str, Vector]]) -> None:
        """Nothing: the vectors are stored with their chunks by the write that follows."""

    def close(self) -> None:
        """Nothing: the store owns the client."""


def vectors_by_hash(
    store: OpenSearchStore, workspace_id: str, model_id: str, hashes: Sequence[str]
) -> dict[str, Vector]:
    """The vectors ``model_id`` made of the workspace's chunks whose ``embedding_hash`` is one
    of ``hashes``, by hash; an index without the field finds none. The same text in many
    chunks has one vector: a page filled by its copies is followed by one for the hashes
    still missing (at most ``HASH_ROUNDS``; what is left is simply embedded again)."""
    wanted = list(dict.fromkeys(hashes))
    found: dict[str, Vector] = {}
    for start in range(0, len(wanted), HASHES_PER_REQUEST):
        missing = wanted[start : start + HASHES_PER_REQUEST]
        for _ in range(HASH_ROUNDS):
            query = {
                "bool": {
                    "filter": [
                        {"term": {"workspace_id": workspace_id}},
                        {"term": {"model_id": model_id}},
                        {"terms": {"embedding_hash": missing}},
                    ]
                }
            }
            body = {
                "query": query,
                "size": len(missing),
                "_source": ["embedding_hash", "embedding", "workspace_id"],
            }
            hits = store.search(workspace_id, body)
            found |= {
                h["_source"]["embedding_hash"]: h["_source"]["embedding"]
                for h in hits
                if h["_source"].get("workspace_id") == workspace_id and "embedding" in h["_source"]
            }
            if len(hits) < len(missing):  # every match was on this page
                break
            missing = [h for h in missing if h not in found]
            if not missing:
                break
    return found
