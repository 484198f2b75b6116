"""The OpenSearch store's query dialect: the neutral ``Filter`` rendered as ``bool.filter`` clauses,
the lexical and k-NN query bodies around them, the k-NN score read back as a cosine, and a
``Find`` (``stores/find.py``) as a search of records (chunk 0s), the facets request, and the
chunks a write leaves behind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.clock import to_iso
from neural_memory.domain.filters import LIST_FIELDS, code_ref_term, metadata_term, without_field
from neural_memory.models import FacetCounts
from neural_memory.stores.find import check_target

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from neural_memory.domain.filters import Filter
    from neural_memory.models import Vector
    from neural_memory.stores.find import Find

NO_EMBEDDING = {"excludes": ["embedding"]}
FACET_SHARD_SIZE = 1_000  # values per field each shard returns to a facets request (the API shows <= 100)


def render_opensearch(flt: Filter) -> list[dict[str, Any]]:
    """OpenSearch ``bool.filter`` clauses for ``flt`` (terms, ranges, the TTL and session rules).

    The same list goes into the lexical query's ``bool.filter`` and inside the ``knn`` clause's
    ``filter`` (efficient filtering), so both retrievers see exactly the same records.
    """
    clauses: list[dict[str, Any]] = [_live(flt.live_at)]
    clauses.extend(_condition_clauses(flt))
    if not flt.include_superseded:
        clauses.append({"bool": {"must_not": [{"exists": {"field": "superseded_by"}}]}})
    if flt.fresh_only:
        clauses.append({"bool": {"must_not": [{"exists": {"field": "possibly_stale"}}]}})
    if flt.stale_only:
        clauses.append({"exists": {"field": "possibly_stale"}})
    if not flt.include_archived:
        clauses.append({"bool": {"must_not": [{"exists": {"field": "archived_at"}}]}})
    if flt.flagged is True:
        clauses.append({"exists": {"field": "flags"}})
    elif flt.flagged is False:
        clauses.append({"bool": {"must_not": [{"exists": {"field": "flags"}}]}})
    if flt.any_of:
        groups = [{"bool": {"filter": _condition_clauses(group)}} for group in flt.any_of]
        clauses.append({"bool": {"should": groups, "minimum_should_match": 1}})
    if flt.exclude_session_id is not None and flt.exclude_after is None:
        clauses.append({"bool": {"must_not": [{"term": {"session_id": flt.exclude_session_id}}]}})
    elif flt.exclude_session_id is not None and flt.exclude_after is not None:
        later = [
            {"term": {"session_id": flt.exclude_session_id}},
            {"range": {"occurred_at": {"gt": to_iso(flt.exclude_after)}}},
        ]
        clauses.append({"bool": {"must_not": [{"bool": {"filter": later}}]}})
    return clauses


def _live(moment: datetime) -> dict[str, Any]:
    """Records not expired at ``moment``: no ``expires_at``, or one after it."""
    return {
        "bool": {
            "should": [
                {"bool": {"must_not": [{"exists": {"field": "expires_at"}}]}},
                {"range": {"expires_at": {"gt": to_iso(moment)}}},
            ],
            "minimum_should_match": 1,
        }
    }


def _condition_clauses(flt: Filter) -> list[dict[str, Any]]:
    """The clauses of one group's conditions: terms, exclusions, the date range and metadata."""
    clauses: list[dict[str, Any]] = [{"terms": {field: list(values)}} for field, values in flt.terms()]
    if flt.created_by:
        clauses.append({"terms": {"created_by": list(flt.created_by)}})
    clauses.extend({"bool": {"must_not": [{"terms": {field: list(values)}}]}} for field, values in flt.excluded_terms())
    bounds: dict[str, str] = {}
    if flt.occurred_from is not None:
        bounds["gte"] = to_iso(flt.occurred_from)
    if flt.occurred_to is not None:
        bounds["lte"] = to_iso(flt.occurred_to)
    if bounds:
        clauses.append({"range": {"occurred_at": bounds}})
    clauses.extend({"term": {"metadata_terms": metadata_term(key, value)}} for key, value in flt.metadata)
    return clauses


def lexical_body(text: str, filters: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    """BM25 over title (×2) and text, any word, under the filters, among the chunks that have a
    text field: passages (searched by vector only) have none, though they carry the title."""
    return {
        "size": limit,
        "_source": NO_EMBEDDING,
        "query": {
            "bool": {
                "must": [{"multi_match": {"query": text, "fields": ["title^2", "text"], "operator": "or"}}],
                "filter": [{"exists": {"field": "text"}}, *filters],
            }
        },
    }


def knn_body(vector: Vector, filters: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    """k-NN with the filter inside the ``knn`` clause (efficient filtering) and an explicit ``size``."""
    return {
        "size": limit,
        "_source": NO_EMBEDDING,
        "query": {"knn": {"embedding": {"vector": list(vector), "k": limit, "filter": {"bool": {"filter": filters}}}}},
    }


def cosine_from_score(score: float) -> float:
    """Undo faiss inner-product scoring (``1 + ip`` for ip >= 0, ``1 / (1 - ip)`` below) and clip."""
    cosine = score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score if score > 0 else -1.0
    return min(1.0, max(0.0, cosine))


def leftover_chunks_query(
    workspace_id: str, rewritten: Sequence[tuple[str, int]], refused: Sequence[str]
) -> dict[str, Any]:
    """The chunks a write leaves behind: those past the new last chunk of each observation written
    again shorter (``rewritten``: id and its chunks now), and every chunk of a new one refused for
    good (``refused``), so none is half-stored."""
    shortened: list[dict[str, Any]] = [
        {
            "bool": {
                "filter": [
                    {"term": {"observation_id": observation_id}},
                    {"range": {"chunk_no": {"gte": chunks}}},
                ]
            }
        }
        for observation_id, chunks in rewritten
    ]
    should = shortened + [{"term": {"observation_id": i}} for i in refused]
    return {"bool": {"filter": [{"term": {"workspace_id": workspace_id}}], "should": should, "minimum_should_match": 1}}


def find_body(workspace_id: str, query: Find, page: int) -> dict[str, Any]:
    """The search for the records (chunk 0s) of ``workspace_id`` that ``query`` matches, in its
    order (``occurred_at``, then ``observation_id``: ``search_after`` pages on it), ``page`` at a time."""
    order = "desc" if query.newest_first else "asc"
    return {
        "query": find_query(workspace_id, query),
        "size": page,
        "_source": NO_EMBEDDING,
        "sort": [{"occurred_at": order}, {"observation_id": order}],
    }


def find_query(workspace_id: str | None, query: Find, *, every_chunk: bool = False) -> dict[str, Any]:
    """The query matching the chunk 0s (the records; with ``every_chunk``, every chunk: each
    carries its record's fields) of ``workspace_id`` (of every workspace with None) that
    ``query`` matches."""
    if every_chunk:
        check_target(query)
    clauses: list[dict[str, Any]] = []
    if workspace_id is not None:
        clauses.append({"term": {"workspace_id": workspace_id}})
    if not every_chunk:
        clauses.append({"term": {"chunk_no": 0}})
    clauses += [*_value_conditions(query), *_moment_conditions(query)]
    absent: list[dict[str, Any]] = []
    for flag, field in ((query.archived, "archived_at"), (query.embedded, "embedded_at")):
        if flag is not None:
            (clauses if flag else absent).append({"exists": {"field": field}})
    if query.holding_vectors:
        # Chunk 0 of an embedded observation always holds a vector (``prepare.chunked`` numbers
        # the passages first), and none once its vectors went.
        clauses.append({"exists": {"field": "embedding"}})
    return {"bool": {"filter": clauses, "must_not": absent}} if absent else {"bool": {"filter": clauses}}


def _value_conditions(query: Find) -> list[dict[str, Any]]:
    """``query``'s conditions on the values of record fields."""
    clauses: list[dict[str, Any]] = []
    if query.session_id is not None:
        clauses.append({"term": {"session_id": query.session_id}})
    if query.supersedes_any:
        clauses.append({"terms": {"supersedes": list(query.supersedes_any)}})
    if query.superseding:
        clauses.append({"exists": {"field": "supersedes"}})
    if query.metadata_any:
        groups = [
            {"bool": {"filter": [{"term": {"metadata_terms": metadata_term(key, value)}} for key, value in group]}}
            for group in query.metadata_any
            if group  # an empty group matches nothing
        ]
        nothing: dict[str, Any] = {"bool": {"must_not": [{"match_all": {}}]}}
        clauses.append({"bool": {"should": groups, "minimum_should_match": 1}} if groups else nothing)
    for field, values in (
        ("source", query.sources),
        ("observation_type", query.observation_types),
        ("tier", query.tiers),
        ("recurrence_key", query.recurrence_keys),
    ):
        if values:
            clauses.append({"terms": {field: list(values)}})
    if query.code_refs:
        clauses.append({"terms": {"metadata_terms": sorted({code_ref_term(ref) for ref in query.code_refs})}})
    return clauses


def _moment_conditions(query: Find) -> list[dict[str, Any]]:
    """``query``'s conditions on moments: expiry, occurrence, the staleness mark's push."""
    clauses: list[dict[str, Any]] = []
    if query.live_at is not None:
        clauses.append(_live(query.live_at))
    if query.expired_at is not None:
        clauses.append({"range": {"expires_at": {"lte": to_iso(query.expired_at)}}})
    for moment, bound in (
        (query.occurred_before, "lt"),
        (query.occurred_after, "gt"),
        (query.occurred_by, "lte"),
    ):
        if moment is not None:
            clauses.append({"range": {"occurred_at": {bound: to_iso(moment)}}})
    if query.marked_from is not None:
        unmarked = {"bool": {"must_not": [{"exists": {"field": "stale_at"}}]}}
        later = {"range": {"stale_at": {"gte": to_iso(query.marked_from)}}}
        clauses.append({"bool": {"should": [unmarked, later], "minimum_should_match": 1}})
    return clauses


def facets_body(workspace_id: str, flt: Filter, limit: int) -> dict[str, Any]:
    """The facets request (``Store.facets``): over the workspace's chunk 0s (one per
    observation), a filter aggregation per list field holding a terms aggregation, and one for
    the total."""
    query = {"bool": {"filter": [{"term": {"workspace_id": workspace_id}}, {"term": {"chunk_no": 0}}]}}
    aggs: dict[str, Any] = {
        field: {
            "filter": {"bool": {"filter": render_opensearch(without_field(flt, field))}},
            "aggs": {
                "values": {
                    "terms": {
                        "field": field,
                        "size": limit,
                        # With several shards each returns its top values only: ask each for
                        # many more, so the merged counts of the top `limit` are exact in practice.
                        "shard_size": FACET_SHARD_SIZE,
                        "order": [{"_count": "desc"}, {"_key": "asc"}],
                    }
                }
            },
        }
        for field in LIST_FIELDS
    }
    aggs["matching"] = {"filter": {"bool": {"filter": render_opensearch(flt)}}}
    return {"query": query, "size": 0, "aggs": aggs}


def facet_counts(found: dict[str, Any]) -> FacetCounts:
    """The counts of a facets request's aggregations."""
    return FacetCounts(
        total=int(found["matching"]["doc_count"]),
        by_field={
            field: [(str(b["key"]), int(b["doc_count"])) for b in found[field]["values"]["buckets"]]
            for field in LIST_FIELDS
        },
    )
