"""The embedded store's per-search reads stay proportional to what they return, not to the store:
counted in SQLite virtual-machine steps, so a query plan that walks every row fails here (one did:
reading the head's vectors walked every chunk of the model, 70 ms at 100k)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from neural_memory.ingest.supersession import superseders
from neural_memory.stores.sqlite.mirror_sql import SqlRowLookup
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.mirror_records import EMBEDDER, entry

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.integration
STEP = 100  # the progress handler runs every STEP virtual-machine instructions


def _steps(store: SqliteStore, read: Callable[[], object]) -> int:
    conn = store._reader().conn
    calls = [0]

    def count() -> int:
        calls[0] += 1
        return 0

    conn.set_progress_handler(count, STEP)
    try:
        read()
    finally:
        conn.set_progress_handler(None, STEP)
    return calls[0] * STEP


@pytest.mark.parametrize("size", [500, 4000])
def test_reads_of_a_few_observations_cost_the_same_in_a_small_and_a_large_store(tmp_path: Path, size: int) -> None:
    # Given a store of `size` embedded observations
    store = SqliteStore(tmp_path / "memory.db")
    words = ["alpha", "beta", "gamma", "delta"]
    for start in range(0, size, 500):
        store.write("acme", [entry(f"o{i}", [words[i % 4], f"w{i}"], False) for i in range(start, start + 500)])
    wanted = [f"o{i}" for i in range(0, 50, 5)]
    # When ten observations' vectors, records and supersession links are read
    costs = {
        "chunk_vectors": _steps(
            store, lambda: store.chunk_vectors("acme", EMBEDDER.model_id, [(i, 0) for i in wanted])
        ),
        "get_many": _steps(store, lambda: store.read("acme", wanted)),
        "superseders": _steps(store, lambda: superseders(store, "acme", wanted)),
        "superseded rows": _steps(store, lambda: SqlRowLookup(store._reader().conn, "acme").superseded()),
    }
    # Then each costs a few thousand steps at most, whatever the store's size (a scan of 4000
    # rows alone is tens of thousands)
    assert all(steps <= 5000 for steps in costs.values()), costs


def test_a_metadata_filter_reads_its_index_not_the_workspace(tmp_path: Path) -> None:
    # Given 4000 observations, ten of which carry the metadata asked for
    store = SqliteStore(tmp_path / "memory.db")
    for start in range(0, 4000, 500):
        batch = [entry(f"o{i}", ["alpha", f"w{i}"], False) for i in range(start, start + 500)]
        for item in batch:
            number = int(item.record.id[1:])
            item.record.metadata = {"repo": "acme/api" if number % 400 == 0 else "other", "n": number}
        store.write("acme", batch)
    lookup = SqlRowLookup(store._reader().conn, "acme")
    # When the rows holding repo = acme/api are read, Then exactly those ten come back, cheaply
    rows: list[int] = []
    steps = _steps(store, lambda: rows.extend(lookup.metadata([("repo", "acme/api")]).tolist()))
    assert len(rows) == 10 and steps <= 5000, steps


def test_a_file_from_before_the_metadata_index_is_indexed_when_opened(tmp_path: Path) -> None:
    # Given a store whose file lacks the metadata terms (as one written by an earlier version)
    path = tmp_path / "memory.db"
    store = SqliteStore(path)
    item = entry("old", ["alpha"], False)
    item.record.metadata = {"repo": "acme/api"}
    store.write("acme", [item])
    conn = store._conn
    conn.execute("DELETE FROM metadata_terms")
    conn.execute("DELETE FROM meta WHERE key = 'metadata_terms'")
    store.close()
    # When it is opened again, Then its observations are found by their metadata
    reopened = SqliteStore(path)
    assert SqlRowLookup(reopened._reader().conn, "acme").metadata([("repo", "acme/api")]).size == 1
