"""The embedded store's in-memory mirror is provably the store: random sequences of writes (ids
repeated within a batch included), deletes, purges and restarts (which load the saved mirror), by
one store or by two stores on one file
(as two processes are: each has its own connection and mirror), and after each step every search
is compared with a brute-force oracle computed from the SQLite rows themselves."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neural_memory.domain import bm25
from neural_memory.domain.filters import Filter
from neural_memory.ingest import lifecycle
from neural_memory.stores.base import read_one
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.mirror_records import EMBEDDER, NOW, WORDS, entry
from tests.helpers.sql_oracle import bm25_by_chunk

if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

pytestmark = pytest.mark.integration

IDS = ["a", "b", "c", "d", "e"]
WORKSPACES = ["acme", "rival"]
# Bounded for `make test`; a longer run: NM_MIRROR_EXAMPLES=2000 pytest tests/integration/test_mirror_oracle.py
EXAMPLES = int(os.environ.get("NM_MIRROR_EXAMPLES", "40"))


words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)
upsert = st.tuples(
    st.just("upsert"),
    st.sampled_from(WORKSPACES),
    st.lists(st.tuples(st.sampled_from(IDS), words, st.booleans()), min_size=1, max_size=4),  # ids may repeat
)
delete = st.tuples(st.just("delete"), st.sampled_from(WORKSPACES), st.sampled_from(IDS))
purge = st.tuples(st.just("purge"))
restart = st.tuples(st.just("restart"))  # close the store (saving its mirror) and open it again
operations = st.lists(
    st.tuples(st.integers(0, 1), st.one_of(upsert, upsert, delete, purge, restart)), min_size=1, max_size=12
)


def _oracle(store: SqliteStore, workspace: str, query: str, live_at: datetime) -> tuple[dict[str, float], list[float]]:
    """Lexical: BM25 per observation (best chunk) relative to the best, by brute force from FTS5's
    postings (``bm25_by_chunk``, checked against FTS5's own bm25() in test_sqlite_mirror); vector:
    the best cosine per chunk by brute force over the embeddings stored in SQLite."""
    conn = store._reader().conn
    live = int(live_at.timestamp() * 1000)
    owners = dict(
        conn.execute(
            "SELECT c.rowid, o.id FROM chunks c JOIN observations o ON o.pk = c.obs_pk WHERE o.workspace_id = ? "
            "AND (o.expires_at IS NULL OR o.expires_at > ?)",
            (workspace, live),
        )
    )
    scores: dict[str, float] = {}
    for rowid, score in bm25_by_chunk(conn, query, bm25.K1, bm25.B, workspace).items():
        if rowid in owners:  # keep each observation's best chunk
            scores[owners[rowid]] = max(score, scores.get(owners[rowid], 0.0))
    best = max(scores.values(), default=1.0)
    lexical = {obs_id: round(score / best, 4) for obs_id, score in scores.items()}
    vector = np.asarray(EMBEDDER.embed([query], "search_query")[0], dtype=np.float32)
    cosines = sorted(
        (
            round(min(1.0, max(0.0, float(np.frombuffer(blob, dtype=np.float32) @ vector))), 4)
            for (blob,) in conn.execute(
                "SELECT c.embedding FROM chunks c JOIN observations o ON o.pk = c.obs_pk WHERE o.workspace_id = ? "
                "AND (o.expires_at IS NULL OR o.expires_at > ?) AND c.embedding IS NOT NULL",
                (workspace, live),
            )
        ),
        reverse=True,
    )
    return lexical, cosines


ONE_IN_4TH = 1.01e-4  # one unit of the 4th decimal the scores are rounded to, and float noise


def _check(store: SqliteStore) -> None:
    flt = Filter(live_at=NOW)
    for workspace in WORKSPACES:
        for query in ("deploy failed", "queue worker lock", "session"):
            vector = EMBEDDER.embed([query], "search_query")[0]
            got = store.retrieve(workspace, text=query, vector=vector, model_id=EMBEDDER.model_id, flt=flt, limit=100)
            lexical, cosines = _oracle(store, workspace, query, NOW)
            best_per_id: dict[str, float] = {}
            for hit in got.lexical:
                best_per_id.setdefault(hit.observation.id, round(hit.score, 4))
            # Within one unit of the 4th decimal: the store and the oracle sum in different orders,
            # and a score on a rounding boundary (0.40625) can round either way.
            assert best_per_id == pytest.approx(lexical, abs=ONE_IN_4TH), (workspace, query)
            vector_scores = [round(hit.score, 4) for hit in got.vector]
            assert vector_scores == pytest.approx(cosines, abs=ONE_IN_4TH), (workspace, query)
            for hit in (*got.lexical, *got.vector):  # no ghost: every hit is the record as stored now
                assert read_one(store, workspace, hit.observation.id) == hit.observation


def _apply(stores: list[SqliteStore], op: tuple[int, Any]) -> None:
    which, (kind, *args) = op
    store = stores[which]
    if kind == "upsert":
        workspace, batch = args
        store.write(workspace, [entry(i, w, expired) for i, w, expired in batch])
    elif kind == "delete":
        store.delete(*args)
    elif kind == "restart":
        store.close()
        stores[which] = SqliteStore(store._path)
    else:
        lifecycle.purge_expired(store, NOW)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_every_search_equals_the_brute_force_oracle_after_any_sequence_of_writes(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[int, Any]]
) -> None:
    path: Path = tmp_path_factory.mktemp("mirror") / "store.sqlite3"
    stores = [SqliteStore(path), SqliteStore(path)]  # two writers on one file, as two processes
    try:
        for op in ops:
            _apply(stores, op)
            for store in stores:
                _check(store)
    finally:
        for store in stores:
            store.close()


def test_an_id_repeated_within_one_batch_leaves_no_stale_chunk(tmp_path: Path) -> None:
    # Given a loaded mirror, and a batch that writes the same id twice: the second version is
    # shorter, so the first version's chunks are deleted inside the same transaction (and SQLite
    # may hand their rowids to the new chunks)
    store = SqliteStore(tmp_path / "store.sqlite3")
    store.write("acme", [entry("seed", ["cache"], expired=False)])
    _check(store)
    store.write(
        "acme",
        [
            entry("x", ["billing", "lock", "queue", "worker", "deploy", "failed"], expired=False),
            entry("x", ["session", "redirect"], expired=False),
        ],
    )
    # Then the old version's words find nothing, the new ones find it, and every score is the oracle's
    flt = Filter(live_at=NOW)
    assert store.retrieve("acme", text="billing", vector=None, model_id=None, flt=flt, limit=10).lexical == []
    found = store.retrieve("acme", text="redirect", vector=None, model_id=None, flt=flt, limit=10).lexical
    assert [hit.observation.content for hit in found] == ["session redirect"]
    _check(store)
    # And after deleting it, a new document is not matched by the deleted one's words
    store.delete("acme", "x")
    store.write("acme", [entry("y", ["console"], expired=False)])
    assert store.retrieve("acme", text="session", vector=None, model_id=None, flt=flt, limit=10).lexical == []
    _check(store)
    assert len(store.retrieve("acme", text="console", vector=None, model_id=None, flt=flt, limit=5).lexical) == 1


def _snapshot(path: Path) -> Path:
    return path.with_name("store.mirror.npz")


def _search_all(store: SqliteStore) -> list[tuple[str, float]]:
    vector = EMBEDDER.embed(["deploy failed"], "search_query")[0]
    flt = Filter(live_at=NOW)
    got = store.retrieve("acme", text="deploy failed", vector=vector, model_id=EMBEDDER.model_id, flt=flt, limit=50)
    return [(h.observation.id, round(h.score, 4)) for h in (*got.lexical, *got.vector)]


def test_a_restart_loads_the_saved_mirror_instead_of_rebuilding_it(tmp_path: Path) -> None:
    # Given a store that searched (its mirror built) and closed (its mirror saved)
    path = tmp_path / "store.sqlite3"
    first = SqliteStore(path)
    first.write("acme", [entry(i, ["deploy", "failed", w], expired=False) for i, w in zip(IDS, WORDS, strict=False)])
    before = _search_all(first)
    first.close()
    saved = _snapshot(path).stat().st_mtime_ns
    assert _snapshot(path).stat().st_mode & 0o777 == 0o600
    # When the store is opened again, Then the same answers come from the snapshot (not rewritten)
    again = SqliteStore(path)
    assert _search_all(again) == before
    assert _snapshot(path).stat().st_mtime_ns == saved
    _check(again)


def test_a_keyword_search_after_a_restart_uses_the_saved_mirror_with_its_vectors(tmp_path: Path) -> None:
    # Given a store whose mirror (with vectors) was saved when it closed
    path = tmp_path / "store.sqlite3"
    first = SqliteStore(path)
    first.write("acme", [entry(i, ["deploy", w], expired=False) for i, w in zip(IDS, WORDS, strict=False)])
    before = _search_all(first)
    first.close()
    saved = _snapshot(path).stat().st_mtime_ns
    # When a restarted store first searches by keyword only, then by vector too
    again = SqliteStore(path)
    again.retrieve("acme", text="deploy", vector=None, model_id=None, flt=Filter(live_at=NOW), limit=5)
    # Then neither search rebuilt the mirror (the snapshot is untouched) and answers are the same
    assert _search_all(again) == before
    assert _snapshot(path).stat().st_mtime_ns == saved


def test_a_stale_or_damaged_snapshot_is_rebuilt_never_used(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    store = SqliteStore(path)
    store.write("acme", [entry("a", ["deploy", "failed"], expired=False)])
    _search_all(store)
    store.close()
    # Given a write the snapshot did not see (another process, which did not close)
    other = SqliteStore(path)
    other.write("acme", [entry("b", ["deploy", "failed", "again"], expired=False)])
    # Then a restart rebuilds: the new observation is found, every score is the oracle's
    restarted = SqliteStore(path)
    assert {i for i, _ in _search_all(restarted)} == {"a", "b"}
    _check(restarted)
    restarted.close()
    # Given a damaged snapshot, Then it is rebuilt from SQLite, not trusted
    _snapshot(path).write_bytes(b"PK\x03\x04 not a snapshot")
    damaged = SqliteStore(path)
    assert {i for i, _ in _search_all(damaged)} == {"a", "b"}
    _check(damaged)


def test_a_file_from_before_passages_opens_with_every_chunk_searched_both_ways(tmp_path: Path) -> None:
    # Given a file written before chunks had roles (no `lexical` column) and no saved mirror
    path = tmp_path / "store.sqlite3"
    first = SqliteStore(path)
    first.write("acme", [entry(i, ["deploy", "failed", w], expired=False) for i, w in zip(IDS, WORDS, strict=False)])
    before = _search_all(first)
    first._conn.execute("ALTER TABLE chunks DROP COLUMN lexical")
    first.close()
    _snapshot(path).unlink()
    # When it is opened again, Then its chunks are searched both ways as before, and the
    # passages and windows of new long content are told apart
    again = SqliteStore(path)
    assert _search_all(again) == before
    again.write("acme", [entry("long", ["deploy", "queue", "worker", "failed", "lock"], expired=False)])
    _check(again)
