"""Records as rows of the ``observations`` and ``chunks`` tables, and back: the conversion both
ways (``RecordField.to_sqlite``/``from_sqlite``) and the statements a write runs inside its
transaction (a record and its chunks written or deleted, pks and records read by id), and the
chunks' vectors read by id."""

from __future__ import annotations

import array
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from neural_memory.domain.record_rules import touches_code
from neural_memory.models import ObservationRecord
from neural_memory.stores.find import check_target
from neural_memory.stores.record_fields import FIELD_NAMES, RECORD_FIELDS
from neural_memory.stores.sqlite.db import write_metadata_terms
from neural_memory.stores.sqlite.find import find_sql

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence

    from neural_memory.stores.base import IndexedObservation
    from neural_memory.stores.find import Find

RECORD_COLUMNS = ", ".join(f"o.{name}" for name in FIELD_NAMES)
_UPDATABLE = [f for f in RECORD_FIELDS if f.name != "id"]
_INSERT = (
    f"INSERT INTO observations (workspace_id, {', '.join(FIELD_NAMES)}) "
    f"VALUES (?, {', '.join('?' * len(FIELD_NAMES))}) RETURNING pk"
)
_UPDATE = f"UPDATE observations SET {', '.join(f'{f.name} = ?' for f in _UPDATABLE)} WHERE pk = ?"
BY_NAME = {f.name: f for f in RECORD_FIELDS}
# Kinds ``RecordField.to_sqlite`` stores as they are: a written row reads every field in one call
# and converts only the others (times, JSON) that are set, most being None, rather than calling
# ``to_sqlite`` per column (28 columns, 100k rows at 100k: ~5% of a write).
_STORED_AS_IS = frozenset({"keyword", "text", "stored", "integer", "float", "boolean"})
_FIELD_VALUES = attrgetter(*FIELD_NAMES)
_CONVERTED = [(at, f.to_sqlite) for at, f in enumerate(RECORD_FIELDS) if f.kind not in _STORED_AS_IS]
_ID_AT = FIELD_NAMES.index("id")


def column_values(record: ObservationRecord) -> list[Any]:
    """The record's column values in ``FIELD_NAMES`` order, as ``RecordField.to_sqlite`` makes them."""
    values = list(_FIELD_VALUES(record))
    for at, to_sqlite in _CONVERTED:
        if values[at] is not None:
            values[at] = to_sqlite(values[at])
    return values


def record_of(row: Sequence[Any]) -> ObservationRecord:
    # Rows were validated as records when written: read back without validating again (a search
    # reads dozens per request).
    return ObservationRecord.model_construct(
        **{f.name: f.from_sqlite(value) for f, value in zip(RECORD_FIELDS, row, strict=True)}
    )


def pks_by_id(conn: sqlite3.Connection, workspace_id: str, ids: Iterable[str]) -> dict[str, int]:
    """The pks of the workspace's observations among ``ids``, read on ``conn`` (inside its transaction)."""
    found: dict[str, int] = {}
    wanted = list(ids)
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        rows = conn.execute(
            f"SELECT id, pk FROM observations WHERE workspace_id = ? AND id IN ({', '.join('?' * len(batch))})",
            (workspace_id, *batch),
        )
        found.update((str(observation_id), int(pk)) for observation_id, pk in rows)
    return found


def records_by_id(conn: sqlite3.Connection, workspace_id: str, ids: Sequence[str]) -> dict[str, ObservationRecord]:
    """The workspace's records among ``ids``, read on ``conn`` (inside its transaction)."""
    found: dict[str, ObservationRecord] = {}
    for start in range(0, len(ids), 500):
        batch = ids[start : start + 500]
        rows = conn.execute(
            f"SELECT {RECORD_COLUMNS} FROM observations o WHERE o.workspace_id = ? "
            f"AND o.id IN ({', '.join('?' * len(batch))})",
            (workspace_id, *batch),
        )
        found.update((record.id, record) for record in map(record_of, rows))
    return found


def write_record(
    conn: sqlite3.Connection, workspace_id: str, item: IndexedObservation, existing: int | None
) -> tuple[int, list[int] | None]:
    """Write the observation row (``existing``: the pk of its stored row, if any); returns its
    pk and, if it existed, the rowids of its old chunks."""
    rec = item.record
    if existing is None:
        row = conn.execute(_INSERT, (workspace_id, *column_values(rec))).fetchone()
        write_metadata_terms(conn, int(row[0]), rec.metadata, rec.code_refs, suffixes=touches_code(rec))
        return int(row[0]), None
    pk = existing
    old = [int(r[0]) for r in conn.execute("SELECT rowid FROM chunks WHERE obs_pk = ?", (pk,))]
    conn.execute("DELETE FROM chunks WHERE obs_pk = ?", (pk,))
    values = column_values(rec)
    del values[_ID_AT]  # the columns of ``_UPDATABLE``
    conn.execute(_UPDATE, (*values, pk))
    conn.execute("DELETE FROM metadata_terms WHERE obs_pk = ?", (pk,))
    write_metadata_terms(conn, pk, rec.metadata, rec.code_refs, suffixes=touches_code(rec))
    return pk, old


def write_chunks(conn: sqlite3.Connection, pk: int, item: IndexedObservation) -> list[int]:
    """Insert the chunks and the FTS5 rows of those searched lexically (a passage has none, so
    it counts in no BM25 statistic); returns the new chunk rowids in chunk order."""
    rowids = []
    for chunk in item.chunks:
        blob = None if chunk.vector is None else np.asarray(chunk.vector, dtype=np.float32).tobytes()
        model_id = item.model_id if blob is not None else None
        rowid = conn.execute(
            "INSERT INTO chunks (obs_pk, chunk_no, text, model_id, embedding, lexical) VALUES (?, ?, ?, ?, ?, ?) "
            "RETURNING rowid",
            (pk, chunk.chunk_no, chunk.text, model_id, blob, int(chunk.lexical)),
        ).fetchone()[0]
        if chunk.lexical:
            conn.execute(
                "INSERT INTO chunks_fts (rowid, title, text) VALUES (?, ?, ?)",
                (rowid, item.record.title, chunk.text),
            )
        rowids.append(int(rowid))
    return rowids


def records_of_chunks(
    conn: sqlite3.Connection, workspace_id: str, rowids: set[int]
) -> dict[int, tuple[int, ObservationRecord]]:
    """(chunk number, observation) per chunk rowid, in one read, scoped to the workspace."""
    if not rowids:
        return {}
    placeholders = ", ".join("?" * len(rowids))
    # CROSS JOIN keeps chunks as the outer loop: look up the few rowids, rather than let the
    # planner walk the workspace index over every observation (70 ms at 100k).
    rows = conn.execute(
        f"SELECT c.rowid, c.chunk_no, {RECORD_COLUMNS} FROM chunks c CROSS JOIN observations o "
        f"ON o.pk = c.obs_pk WHERE c.rowid IN ({placeholders}) AND o.workspace_id = ?",
        (*rowids, workspace_id),
    ).fetchall()
    return {int(r[0]): (int(r[1]), record_of(r[2:])) for r in rows}


def target_rows(conn: sqlite3.Connection, workspace_id: str, target: str | Find) -> list[tuple[int, str]]:
    """(pk, id) of the records ``target`` names (an id, or a ``Find``), read on ``conn``."""
    if isinstance(target, str):
        sql = "SELECT pk, id FROM observations WHERE workspace_id = ? AND id = ?"
        params: list[object] = [workspace_id, target]
    else:
        check_target(target)
        sql, params = find_sql("o.pk, o.id", workspace_id, target)
    return [(int(pk), str(observation_id)) for pk, observation_id in conn.execute(sql, params)]


def delete_rows(conn: sqlite3.Connection, pks: Sequence[int]) -> list[int]:
    """Delete the observations ``pks`` and their chunks (inside the caller's transaction); the
    rowids of the chunks deleted, for the mirror to forget."""
    chunks: list[int] = []
    for start in range(0, len(pks), 500):
        batch = pks[start : start + 500]
        marks = ", ".join("?" * len(batch))
        rows = conn.execute(f"SELECT rowid FROM chunks WHERE obs_pk IN ({marks})", batch)
        chunks += [int(rowid) for (rowid,) in rows]
        conn.execute(f"DELETE FROM chunks WHERE obs_pk IN ({marks})", batch)
        conn.execute(f"DELETE FROM observations WHERE pk IN ({marks})", batch)
    return chunks


def chunk_vectors_of(
    conn: sqlite3.Connection, workspace_id: str, model_id: str, chunks: Sequence[tuple[str, int]]
) -> dict[tuple[str, int], Sequence[float]]:
    """The vectors ``model_id`` made of these (observation id, chunk number) chunks, in one read."""
    wanted = set(chunks)
    ids = list(dict.fromkeys(observation_id for observation_id, _ in chunks))
    if not ids:
        return {}
    rows = conn.execute(
        # CROSS JOIN keeps the few observations as the outer loop (else the planner may walk
        # every chunk of the model: 70 ms at 100k).
        "SELECT o.id, c.chunk_no, c.embedding FROM observations o CROSS JOIN chunks c ON c.obs_pk = o.pk "
        f"WHERE o.workspace_id = ? AND o.id IN ({', '.join('?' * len(ids))}) AND c.model_id = ? "
        "AND c.embedding IS NOT NULL",
        (workspace_id, *ids, model_id),
    ).fetchall()
    return {
        # array.array copies the blob as it is: no Python float per component.
        (str(observation_id), int(chunk_no)): array.array("f", blob)
        for observation_id, chunk_no, blob in rows
        if (observation_id, chunk_no) in wanted
    }
