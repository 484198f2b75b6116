"""Reads of every workspace's records of one index in (workspace, id) order, beside the port: a
reindex's copy (``scan``) and its comparison of two indices (``written``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.clock import from_iso, to_iso
from neural_memory.stores.opensearch.documents import record_of
from neural_memory.stores.opensearch.dsl import NO_EMBEDDING

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from datetime import datetime

    from neural_memory.models import ObservationRecord
    from neural_memory.stores.opensearch.store import OpenSearchStore

WRITTEN_PAGE = 5_000  # observations a page of ``written`` reads


def scan(
    store: OpenSearchStore, after: Sequence[str] | None, size: int, since: datetime | None = None
) -> list[tuple[str, ObservationRecord]]:
    """Up to ``size`` observations of every workspace, in (workspace, id) order after the sort
    key ``after``; with ``since``, only those written at or after it."""
    hits = _sorted_firsts(store, after, size, since, NO_EMBEDDING)
    return [(h["_source"]["workspace_id"], record_of(h["_source"], h["_source"].get("content", ""))) for h in hits]


def written(store: OpenSearchStore) -> Iterator[tuple[tuple[str, str], datetime]]:
    """Every observation's (workspace, id), in that order, with when it was written: page by
    page, so two indices can be compared without holding either in memory."""
    after: list[str] | None = None
    source = ["workspace_id", "observation_id", "ingested_at"]
    while hits := _sorted_firsts(store, after, WRITTEN_PAGE, None, source):
        for h in hits:
            yield (
                (h["_source"]["workspace_id"], h["_source"]["observation_id"]),
                from_iso(h["_source"]["ingested_at"]),
            )
        after = hits[-1]["sort"]


def _sorted_firsts(
    store: OpenSearchStore, after: Sequence[str] | None, size: int, since: datetime | None, source: Any
) -> list[dict[str, Any]]:
    """A page of chunk 0s of every workspace, in (workspace, id) order after ``after``."""
    filters: list[dict[str, Any]] = [{"term": {"chunk_no": 0}}]
    if since is not None:
        filters.append({"range": {"ingested_at": {"gte": to_iso(since)}}})
    body: dict[str, Any] = {
        "size": size,
        "_source": source,
        "query": {"bool": {"filter": filters}},
        "sort": [{"workspace_id": "asc"}, {"observation_id": "asc"}],
    }
    if after:
        body["search_after"] = list(after)
    return store.search(None, body)
