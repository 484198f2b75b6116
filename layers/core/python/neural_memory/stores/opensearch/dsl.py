"""The OpenSearch store's query dialect: the neutral ``Filter`` rendered as ``bool.filter`` clauses,
the lexical and k-NN query bodies around them, the k-NN score read back as a cosine, and a
``Find`` (``stores/find.py``) as a search of records (chunk 0s)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.clock import to_iso
from neural_memory.search.filters.model import code_ref_term, metadata_term

if TYPE_CHECKING:
    from datetime import datetime

    from neural_memory.models import Vector
    from neural_memory.search.filters.model import Filter
    from neural_memory.stores.find import Find

NO_EMBEDDING = {"excludes": ["embedding"]}


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
    if not flt.include_archived:
        clauses.append({"bool": {"must_not": [{"exists": {"field": "archived_at"}}]}})
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


def find_body(workspace_id: str, query: Find, page: int) -> dict[str, Any]:
    """The search for the records (chunk 0s) of ``workspace_id`` that ``query`` matches, in its
    order (``occurred_at``, then ``observation_id``: ``search_after`` pages on it), ``page`` at a time."""
    clauses: list[dict[str, Any]] = [{"term": {"workspace_id": workspace_id}}, {"term": {"chunk_no": 0}}]
    if query.session_id is not None:
        clauses.append({"term": {"session_id": query.session_id}})
    if query.supersedes_any:
        clauses.append({"terms": {"supersedes": list(query.supersedes_any)}})
    if query.metadata_any:
        groups = [
            {"bool": {"filter": [{"term": {"metadata_terms": metadata_term(key, value)}} for key, value in group]}}
            for group in query.metadata_any
            if group  # an empty group matches nothing
        ]
        nothing: dict[str, Any] = {"bool": {"must_not": [{"match_all": {}}]}}
        clauses.append({"bool": {"should": groups, "minimum_should_match": 1}} if groups else nothing)
    if query.live_at is not None:
        clauses.append(_live(query.live_at))
    if query.occurred_before is not None:
        clauses.append({"range": {"occurred_at": {"lt": to_iso(query.occurred_before)}}})
    if query.occurred_after is not None:
        clauses.append({"range": {"occurred_at": {"gt": to_iso(query.occurred_after)}}})
    if query.marked_from is not None:
        unmarked = {"bool": {"must_not": [{"exists": {"field": "stale_at"}}]}}
        later = {"range": {"stale_at": {"gte": to_iso(query.marked_from)}}}
        clauses.append({"bool": {"should": [unmarked, later], "minimum_should_match": 1}})
    for field, values in (("source", query.sources), ("observation_type", query.observation_types)):
        if values:
            clauses.append({"terms": {field: list(values)}})
    if query.code_refs:
        clauses.append({"terms": {"metadata_terms": sorted({code_ref_term(ref) for ref in query.code_refs})}})
    order = "desc" if query.newest_first else "asc"
    return {
        "query": {"bool": {"filter": clauses}},
        "size": page,
        "_source": NO_EMBEDDING,
        "sort": [{"occurred_at": order}, {"observation_id": order}],
    }
