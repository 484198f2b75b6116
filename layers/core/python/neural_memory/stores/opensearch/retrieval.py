"""The OpenSearch store's ``retrieve``: the lexical and k-NN searches in one ``_msearch`` under one
filter list, their scores mapped to the ``Store`` contract (BM25 divided by the query's best; faiss
inner product back to cosine: ``dsl.cosine_from_score``), each hit with its parent's full text
(chunk 0 carries it; the other parents are read in one ``mget``). A retriever that fails while the
other answers is named in ``degraded``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.errors import BackendUnavailable
from neural_memory.models import Hit, Retrieved
from neural_memory.stores.opensearch.documents import doc_id, record_of
from neural_memory.stores.opensearch.dsl import cosine_from_score, knn_body, lexical_body

if TYPE_CHECKING:
    from collections.abc import Callable

    from neural_memory.models import Vector

__all__ = ["retrieve_hits"]


def retrieve_hits(
    msearch: Callable[..., Any],
    mget: Callable[..., Any],
    index: str,
    workspace_id: str,
    filters: list[dict[str, Any]],
    *,
    text: str | None,
    vector: Vector | None,
    model_id: str | None,
    limit: int,
) -> Retrieved:
    """Both retrievers in one ``_msearch`` on ``index`` (the workspace's) under the same ``filters``
    (the workspace's first); ``msearch`` and ``mget``: the client's, through the store's ``_call``."""
    kinds: list[str] = []
    lines: list[dict[str, Any]] = []
    if text:
        kinds.append("lexical")
        lines += [
            {"index": index, "ignore_unavailable": True},
            lexical_body(text, filters, limit),
        ]
    if vector is not None and model_id is not None:
        kinds.append("vector")
        # Only vectors of the query's model: after a model change (or mid-reindex) another
        # model's vectors of the same dimension would compare as if meaningful.
        lines += [
            {"index": index, "ignore_unavailable": True},
            knn_body(vector, [*filters, {"term": {"model_id": model_id}}], limit),
        ]
    if not kinds:
        return Retrieved()
    # The index in the path (not only in each header line) scopes the request for IAM grants.
    reply = msearch(index=index, body=lines)
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
            result.lexical = _hits(mget, index, workspace_id, hits, lambda s, best=best: s / best)
        else:
            result.vector = _hits(mget, index, workspace_id, hits, cosine_from_score)
    if failed and len(failed) == len(kinds):
        raise BackendUnavailable(f"OpenSearch search failed: {failed}")
    result.degraded = [f"{kind}:failed ({reason})" for kind, reason in failed.items()]
    return result


def _hits(mget: Callable[..., Any], index: str, workspace_id: str, hits: list[dict[str, Any]], score: Any) -> list[Hit]:
    """Hits with their parents' full text, fetched in one batch read."""
    missing = {h["_source"]["observation_id"] for h in hits if h["_source"].get("chunk_no") != 0}
    texts: dict[str, str] = {
        h["_source"]["observation_id"]: h["_source"].get("content", "")
        for h in hits
        if h["_source"].get("chunk_no") == 0
    }
    missing -= set(texts)
    if missing:
        reply = mget(
            index=index,
            body={"ids": [doc_id(workspace_id, obs_id, 0) for obs_id in sorted(missing)]},
            _source_includes=["observation_id", "content"],
        )
        texts |= {
            d["_source"]["observation_id"]: d["_source"].get("content", "") for d in reply["docs"] if d.get("found")
        }
    return [
        Hit(
            observation=record_of(h["_source"], texts.get(h["_source"]["observation_id"], "")),
            chunk_no=int(h["_source"]["chunk_no"]),
            score=float(score(float(h["_score"]))),
        )
        for h in hits
        if h["_source"].get("workspace_id") == workspace_id
    ]
