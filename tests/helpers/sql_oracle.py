"""Reference renderings in SQL, used by tests as oracles for the stores' own filtering and ranking."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.clock import to_ms
from neural_memory.stores.sqlite_fts import query_words

if TYPE_CHECKING:
    from neural_memory.filters import Filter


def render_sqlite(flt: Filter, table: str = "o") -> tuple[str, list[object]]:
    """SQL ``WHERE`` conditions (joined by AND) and their bound parameters, for the observations
    table aliased ``table``. Values are only ever bound parameters, never spliced into SQL.
    """
    clauses: list[str] = [f"({table}.expires_at IS NULL OR {table}.expires_at > ?)"]
    params: list[object] = [to_ms(flt.live_at)]
    _conditions(flt, table, clauses, params)
    if not flt.include_superseded:
        clauses.append(f"{table}.superseded_by IS NULL")
    if flt.any_of:
        groups: list[str] = []
        for group in flt.any_of:
            inside: list[str] = ["1"]
            _conditions(group, table, inside, params)
            groups.append("(" + " AND ".join(inside) + ")")
        clauses.append("(" + " OR ".join(groups) + ")")
    if flt.exclude_session_id is not None and flt.exclude_after is None:
        clauses.append(f"({table}.session_id IS NULL OR {table}.session_id != ?)")
        params.append(flt.exclude_session_id)
    elif flt.exclude_session_id is not None and flt.exclude_after is not None:
        clauses.append(f"({table}.session_id IS NULL OR {table}.session_id != ? OR {table}.occurred_at <= ?)")
        params.extend([flt.exclude_session_id, to_ms(flt.exclude_after)])
    return " AND ".join(clauses), params


def _conditions(flt: Filter, table: str, clauses: list[str], params: list[object]) -> None:
    """Append one group's conditions; metadata through JSON paths and types (the store uses json_each)."""
    for column, values in flt.terms():
        clauses.append(f"{table}.{column} IN ({', '.join('?' * len(values))})")
        params.extend(values)
    for column, values in flt.excluded_terms():
        clauses.append(f"({table}.{column} IS NULL OR {table}.{column} NOT IN ({', '.join('?' * len(values))}))")
        params.extend(values)
    if flt.occurred_from is not None:
        clauses.append(f"{table}.occurred_at >= ?")
        params.append(to_ms(flt.occurred_from))
    if flt.occurred_to is not None:
        clauses.append(f"{table}.occurred_at <= ?")
        params.append(to_ms(flt.occurred_to))
    for key, value in flt.metadata:
        path = '$."' + key + '"'
        if isinstance(value, bool):
            clauses.append(f"json_type({table}.metadata, ?) = ?")
            params.extend([path, "true" if value else "false"])
        else:
            types = "('integer', 'real')" if isinstance(value, int | float) else "('text')"
            clauses.append(f"json_type({table}.metadata, ?) IN {types} AND json_extract({table}.metadata, ?) = ?")
            params.extend([path, path, value])


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression for ``text``: each query word quoted, joined by OR.

    Words are runs of letters and digits, so a quoted word can hold no quote or operator;
    ``"foo" OR NEAR(`` becomes ``"foo" OR "near"``. None if there is no word at all.
    """
    return " OR ".join(f'"{word}"' for word in query_words(text)) or None
