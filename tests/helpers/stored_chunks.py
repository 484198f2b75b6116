"""What the embedded store holds for an observation's chunks, read from its tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.stores.sqlite.store import SqliteStore

if TYPE_CHECKING:
    from neural_memory.stores.base import Store


def stored_chunks(store: Store, workspace_id: str, observation_id: str) -> list[tuple[str, bool, bool]]:
    """Each chunk of the observation in order: its text, whether it has a vector, whether BM25 reads it."""
    assert isinstance(store, SqliteStore), store
    conn = store._reader().conn
    rows = conn.execute(
        "SELECT c.text, c.embedding IS NOT NULL, c.lexical FROM observations o JOIN chunks c ON c.obs_pk = o.pk "
        "WHERE o.workspace_id = ? AND o.id = ? ORDER BY c.chunk_no",
        (workspace_id, observation_id),
    ).fetchall()
    return [(str(text), bool(vector), bool(lexical)) for text, vector, lexical in rows]
