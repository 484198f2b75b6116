"""Facets in SQL: how many live observations of a workspace hold each value of every list field,
each counted under the filter without that field's own conditions, in one read snapshot."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.clock import to_ms
from neural_memory.domain.filters import LIST_FIELDS, without_field
from neural_memory.models import FacetCounts

if TYPE_CHECKING:
    import sqlite3

    from neural_memory.domain.filters import Filter


def facet_counts(conn: sqlite3.Connection, workspace_id: str, flt: Filter, limit: int) -> FacetCounts:
    """Counts by value of each list field (see the ``Store`` protocol): one GROUP BY per field, on
    ``conn`` (inside the caller's read transaction)."""
    if flt.metadata or flt.any_of or flt.exclude_session_id is not None:
        raise ValueError("facets read list, date, TTL and supersession conditions only")
    by_field: dict[str, list[tuple[str, int]]] = {}
    where, params = _facet_conditions(flt)
    total = conn.execute(
        f"SELECT count(*) FROM observations o WHERE o.workspace_id = ? AND {where}", [workspace_id, *params]
    ).fetchone()[0]
    for column in LIST_FIELDS:  # names from the model, never from a caller
        where, params = _facet_conditions(without_field(flt, column))
        rows = conn.execute(
            f"SELECT o.{column}, count(*) FROM observations o WHERE o.workspace_id = ? AND {where} "
            f"AND o.{column} IS NOT NULL GROUP BY o.{column} ORDER BY count(*) DESC, o.{column} LIMIT ?",
            [workspace_id, *params, limit],
        ).fetchall()
        by_field[column] = [(str(value), int(count)) for value, count in rows]
    return FacetCounts(total=int(total), by_field=by_field)


def _facet_conditions(flt: Filter) -> tuple[str, list[object]]:
    """SQL conditions on the observations table ``o`` for what facets read of ``flt``: live at
    ``flt.live_at``, not superseded (unless asked), the list fields' values and exclusions (a
    record without a value is never excluded), and the date range. Values are bound, never spliced."""
    clauses = ["(o.expires_at IS NULL OR o.expires_at > ?)"]
    params: list[object] = [to_ms(flt.live_at)]
    if not flt.include_superseded:
        clauses.append("o.superseded_by IS NULL")
    if not flt.include_archived:
        clauses.append("o.archived_at IS NULL")
    if flt.flagged is not None:
        clauses.append("o.flags IS NOT NULL" if flt.flagged else "o.flags IS NULL")
    for column, values in flt.terms():
        clauses.append(f"o.{column} IN ({', '.join('?' * len(values))})")
        params.extend(values)
    for column, values in flt.excluded_terms():
        clauses.append(f"(o.{column} IS NULL OR o.{column} NOT IN ({', '.join('?' * len(values))}))")
        params.extend(values)
    if flt.created_by:
        clauses.append(f"o.created_by IN ({', '.join('?' * len(flt.created_by))})")
        params.extend(flt.created_by)
    if flt.occurred_from is not None:
        clauses.append("o.occurred_at >= ?")
        params.append(to_ms(flt.occurred_from))
    if flt.occurred_to is not None:
        clauses.append("o.occurred_at <= ?")
        params.append(to_ms(flt.occurred_to))
    return " AND ".join(clauses), params
