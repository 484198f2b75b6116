"""Reference renderings in SQL, used by tests as oracles for the stores' own filtering and ranking."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from neural_memory.clock import to_ms
from neural_memory.stores.sqlite.fts import COLUMN_WEIGHTS, TOKENIZE, query_words

if TYPE_CHECKING:
    import sqlite3

    from neural_memory.domain.filters import Filter


def render_sqlite(flt: Filter, table: str = "o") -> tuple[str, list[object]]:
    """SQL ``WHERE`` conditions (joined by AND) and their bound parameters, for the observations
    table aliased ``table``. Values are only ever bound parameters, never spliced into SQL.
    """
    clauses: list[str] = [f"({table}.expires_at IS NULL OR {table}.expires_at > ?)"]
    params: list[object] = [to_ms(flt.live_at)]
    _conditions(flt, table, clauses, params)
    if not flt.include_superseded:
        clauses.append(f"{table}.superseded_by IS NULL")
    if not flt.include_archived:
        clauses.append(f"{table}.archived_at IS NULL")
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


def bm25_by_chunk(
    conn: sqlite3.Connection, text: str, k1: float, b: float, workspace: str | None = None
) -> dict[int, float]:
    """BM25 of every chunk (by rowid) holding a word of ``text``, by brute force from FTS5's own
    postings, with any ``k1`` and ``b`` (FTS5's bm25() has 1.2 and 0.75 built in): FTS5's formula,
    title occurrences counting twice, idf over every row of the table, floored at 1e-6. With
    ``workspace``: over that workspace's rows alone (its chunks, its statistics), as the store
    scores; without, over the whole table, as FTS5's own bm25() does."""
    words = query_words(text)
    if not words:
        return {}
    # The query's index terms, from a scratch table with the same tokenizer as chunks_fts.
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.oracle_q USING fts5 (text, tokenize = '" + TOKENIZE + "')")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.oracle_qv USING fts5vocab (temp, oracle_q, row)")
    conn.execute("DELETE FROM temp.oracle_q")
    conn.execute("INSERT INTO temp.oracle_q (text) VALUES (?)", (" ".join(words),))
    terms = {term for (term,) in conn.execute("SELECT term FROM temp.oracle_qv")}
    conn.execute("DELETE FROM temp.oracle_q")
    mine: set[int] | None = None
    if workspace is not None:
        mine = {
            rowid
            for (rowid,) in conn.execute(
                "SELECT f.rowid FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid "
                "JOIN observations o ON o.pk = c.obs_pk WHERE o.workspace_id = ?",
                (workspace,),
            )
        }
    rows = conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] if mine is None else len(mine)
    length: dict[int, int] = {}
    frequency: dict[int, dict[str, float]] = {}
    for term, doc, col in conn.execute("SELECT term, doc, col FROM chunks_vocab"):
        if mine is not None and doc not in mine:
            continue
        length[doc] = length.get(doc, 0) + 1
        if term in terms:
            per_doc = frequency.setdefault(doc, {})
            per_doc[term] = per_doc.get(term, 0.0) + COLUMN_WEIGHTS[col]
    average = sum(length.values()) / max(rows, 1)
    holding = {term: sum(1 for per_doc in frequency.values() if term in per_doc) for term in terms}
    scores: dict[int, float] = {}
    for doc, per_doc in frequency.items():
        norm = k1 * (1 - b + b * length[doc] / average)
        scores[doc] = sum(
            max(math.log((rows - holding[t] + 0.5) / (holding[t] + 0.5)), 1e-6) * tf * (k1 + 1) / (tf + norm)
            for t, tf in per_doc.items()
        )
    return scores
