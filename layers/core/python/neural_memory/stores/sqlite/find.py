"""``Find`` in SQL over the ``observations`` table (aliased ``o``): conditions as bound
parameters, the order and the limit, and the partial index a sparse condition reads from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, get_args

from neural_memory.clock import to_ms
from neural_memory.domain.filters import code_ref_term, metadata_term
from neural_memory.domain.record_rules import CLAIM_TYPES
from neural_memory.models import Tier
from neural_memory.stores.find import check_count
from neural_memory.stores.sqlite.db import CLAIMS_CONDITION, CLAIMS_INDEX

if TYPE_CHECKING:
    from neural_memory.stores.find import Find

# At most this many ids of ``Find.supersedes_any`` are searched for as text before parsing.
PREFILTERED_IDS = 16


def find_sql(columns: str, workspace_id: str, query: Find) -> tuple[str, list[object]]:
    """The statement selecting ``columns`` of the records of ``workspace_id`` that ``query``
    matches, in its order, and its parameters (values are bound, never spliced)."""
    source, where, params = find_where(workspace_id, query)
    direction = "DESC" if query.newest_first else "ASC"
    order = f"o.occurred_at {direction}, o.id {direction}"
    sql = f"SELECT {columns} FROM {source} WHERE {where} ORDER BY {order}"
    if query.limit is not None:
        sql += " LIMIT ?"
        params.append(query.limit)
    return sql, params


def count_sql(workspace_id: str | None, query: Find, by: str | None) -> tuple[str, list[object]]:
    """The statement counting the records ``query`` matches (of every workspace with None), in
    total or by the values of ``by`` (one of ``COUNTED_BY``), and its parameters."""
    check_count(workspace_id, by)
    source, where, params = find_where(workspace_id, query)
    if by is None:
        return f"SELECT count(*) FROM {source} WHERE {where}", params
    return f"SELECT o.{by}, count(*) FROM {source} WHERE {where} AND o.{by} IS NOT NULL GROUP BY o.{by}", params


def find_where(workspace_id: str | None, query: Find) -> tuple[str, str, list[object]]:
    """Where the records ``query`` matches are read from (``o``), the condition and its
    parameters, in that order (values are bound, never spliced; a tier, one of the model's
    literals, is written out, so a partial index on it applies)."""
    source, source_params = _source(query)
    clauses: list[str] = []
    params: list[object] = []
    if workspace_id is not None:
        clauses.append("o.workspace_id = ?")
        params.append(workspace_id)
    if query.session_id is not None:
        clauses.append("o.session_id = ?")
        params.append(query.session_id)
    if query.supersedes_any:
        _supersedes(query.supersedes_any, clauses, params)
    elif query.superseding:
        clauses.append("o.supersedes IS NOT NULL")
    _times(query, clauses, params)
    _lifecycle(query, clauses)
    for column, values in (
        ("source", query.sources),
        ("observation_type", query.observation_types),
        ("recurrence_key", query.recurrence_keys),
    ):
        if values:  # names from here, never from a caller
            clauses.append(f"o.{column} IN ({', '.join('?' * len(values))})")
            params.extend(values)
    if query.code_refs:
        terms = sorted({code_ref_term(ref) for ref in query.code_refs})
        marks = ", ".join("?" * len(terms))
        if _claims(query):  # rows of the claims' partial index (``_source``): its condition, stated
            clauses.append(CLAIMS_CONDITION)
            clauses.append(f"EXISTS (SELECT 1 FROM metadata_terms t WHERE t.obs_pk = o.pk AND t.term IN ({marks}))")
        else:
            clauses.append(f"o.pk IN (SELECT t.obs_pk FROM metadata_terms t WHERE t.term IN ({marks}))")
        params.extend(terms)
    return source, " AND ".join(clauses) or "1", [*source_params, *params]


def _lifecycle(query: Find, clauses: list[str]) -> None:
    """The conditions on the tier lifecycle: tiers, archive, recurrence embedding, vectors held."""
    if query.tiers:
        unknown = set(query.tiers) - set(get_args(Tier))
        if unknown:
            raise ValueError(f"no such tier: {sorted(unknown)}")
        # Written out (the model's literals, checked above): ``tier = 'E'`` is what the partial
        # index of unarchived E observations is declared on.
        clauses.append(" OR ".join(f"o.tier = '{tier}'" for tier in query.tiers).join("()"))
    for flag, column in ((query.archived, "archived_at"), (query.embedded, "embedded_at")):
        if flag is not None:
            clauses.append(f"o.{column} IS {'NOT NULL' if flag else 'NULL'}")
    if query.holding_vectors:
        clauses.append("EXISTS (SELECT 1 FROM chunks c WHERE c.obs_pk = o.pk AND c.embedding IS NOT NULL)")


def _supersedes(ids: tuple[str, ...], clauses: list[str], params: list[object]) -> None:
    """The condition that ``supersedes`` names one of ``ids``."""
    # Each row's JSON list is searched for the ids' JSON text before it is parsed: of a
    # thousand superseding rows a walk's read parses only the few that name one
    # (bench.find_paths, 4,000 decisions, a quarter superseding: ``superseders`` over this,
    # 0.97 ms a read, against 1.08 for the old dedicated statement's join, which parsed every
    # row; 1.24 without the text search). A match of the text is only a candidate; json_each
    # decides. Only for a few ids: SQLite refuses an expression deeper than 1,000 (a batch's
    # relink asks for its every target at once).
    clauses.append("o.supersedes IS NOT NULL")
    if len(ids) <= PREFILTERED_IDS:
        clauses.append(f"({' OR '.join('instr(o.supersedes, ?)' for _ in ids)})")
        params.extend(json.dumps(target) for target in ids)  # as ``to_sqlite`` writes each
    clauses.append(f"EXISTS (SELECT 1 FROM json_each(o.supersedes) m WHERE m.value IN ({', '.join('?' * len(ids))}))")
    params.extend(ids)


def _times(query: Find, clauses: list[str], params: list[object]) -> None:
    """The conditions on moments: expiry, occurrence, the staleness mark's push."""
    for moment, condition in (
        (query.live_at, "(o.expires_at IS NULL OR o.expires_at > ?)"),
        (query.occurred_before, "o.occurred_at < ?"),
        (query.occurred_after, "o.occurred_at > ?"),
        (query.marked_from, "(o.stale_at IS NULL OR o.stale_at >= ?)"),
        (query.occurred_by, "o.occurred_at <= ?"),
        (query.expired_at, "o.expires_at IS NOT NULL AND o.expires_at <= ?"),
    ):
        if moment is not None:
            clauses.append(condition)
            params.append(to_ms(moment))


def _claims(query: Find) -> bool:
    """Whether ``query`` asks for claims naming code: the rows of the claims' partial index."""
    return bool(query.code_refs) and bool(query.observation_types) and set(query.observation_types) <= set(CLAIM_TYPES)


def _source(query: Find) -> tuple[str, list[object]]:
    """Where the rows are read from (``o``): the index of the sparsest condition ``query`` holds."""
    if query.metadata_any:
        # Per group, the rows of ``metadata_terms`` of its first pair joined with the others'
        # on the same observation (CROSS JOIN keeps that order: a repository's term may be in
        # every row); their union looked up by pk.
        selects: list[str] = []
        params: list[object] = []
        for group in query.metadata_any:
            terms = [metadata_term(key, value) for key, value in group]
            if not terms:
                continue  # an empty group matches nothing
            joins = "".join(
                f" CROSS JOIN metadata_terms t{n} ON t{n}.obs_pk = t0.obs_pk AND t{n}.term = ?"
                for n in range(1, len(terms))
            )
            selects.append(f"SELECT t0.obs_pk FROM metadata_terms t0{joins} WHERE t0.term = ?")
            params += [*terms[1:], terms[0]]
        union = " UNION ".join(selects) or "SELECT NULL AS obs_pk WHERE 0"
        return f"({union}) AS s CROSS JOIN observations o ON o.pk = s.obs_pk", params
    if _claims(query):
        # From the few claims naming code (a partial index), never from the terms: a path every
        # push touches is named by thousands of pushes, and a push's write must not read them
        # (docs/benchmarks.md, "What a push costs once many observations name its paths": 2,000
        # pushes naming the path, 216.6 ms a push's write from the terms, 4.9 ms from here).
        return f"observations o INDEXED BY {CLAIMS_INDEX}", []
    if query.session_id is not None:
        # The session's rows from their partial index, rather than the workspace walked in time
        # order until one of the session turns up (a chat turn's write asks this). The previous
        # turn through here: 34 us against the old dedicated statement's 25 (bench.find_paths,
        # 50k records; most of it the tie-break by id, sorted among equal times), about 30 us per
        # embedded batch next to the model's ~0.5 s (bench.ingest_throughput --count 2000: within
        # its own spread, 58-71 obs/s before and after).
        return "observations o INDEXED BY observations_session", []
    if query.supersedes_any or query.superseding:
        # From the partial index of the few observations that supersede others (the planner
        # would rather walk the whole workspace in time order).
        return "observations o INDEXED BY observations_superseding", []
    if query.recurrence_keys:
        # From the partial index of recurrence keys, as the store's ``recurrences`` read them.
        return "observations o INDEXED BY observations_recurrence", []
    if query.tiers == ("E",) and query.archived is False:
        # The archive's candidates from their partial index (unarchived E, by occurrence).
        return "observations o INDEXED BY observations_unarchived_execution", []
    return "observations o", []
