"""``Find`` in SQL over the ``observations`` table (aliased ``o``): conditions as bound
parameters, the order and the limit, and the partial index a sparse condition reads from."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.clock import to_ms

if TYPE_CHECKING:
    from neural_memory.stores.find import Find


def find_sql(columns: str, workspace_id: str, query: Find) -> tuple[str, list[object]]:
    """The statement selecting ``columns`` of the records of ``workspace_id`` that ``query``
    matches, in its order, and its parameters (values are bound, never spliced)."""
    clauses = ["o.workspace_id = ?"]
    params: list[object] = [workspace_id]
    source = "observations o"
    if query.session_id is not None:
        # The session's rows from their partial index, rather than the workspace walked in time
        # order until one of the session turns up (a chat turn's write asks this). The previous
        # turn through here costs 36 us against the old dedicated statement's 27 (50k records,
        # 200 sessions, 2,000 asks; 7 of the 9 us are the tie-break by id, sorted by SQLite among
        # equal times): about 30 us per embedded batch of ingest, next to the model's ~0.5 s
        # (bench.ingest_throughput --count 2000: within its own spread, 58-71 obs/s both ways).
        source = "observations o INDEXED BY observations_session"
        clauses.append("o.session_id = ?")
        params.append(query.session_id)
    if query.occurred_before is not None:
        clauses.append("o.occurred_at < ?")
        params.append(to_ms(query.occurred_before))
    direction = "DESC" if query.newest_first else "ASC"
    order = f"o.occurred_at {direction}, o.id {direction}"
    sql = f"SELECT {columns} FROM {source} WHERE {' AND '.join(clauses)} ORDER BY {order}"
    if query.limit is not None:
        sql += " LIMIT ?"
        params.append(query.limit)
    return sql, params
