"""The in-memory mirror answers exactly as SQLite FTS5 would, and stays fresh across writers."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
from neural_memory.domain import bm25
from neural_memory.domain.filters import Filter
from neural_memory.models import ObservationIn
from neural_memory.service import Service
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.fakes import HashEmbedder
from tests.helpers.sql_oracle import bm25_by_chunk, fts_query

if TYPE_CHECKING:
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration

NOW = datetime(2025, 12, 14, tzinfo=UTC)
TEXTS = [
    ("Deploy failed on production", "The build failed because NEXT_PUBLIC_API_URL was missing in production."),
    ("Fix auth redirect loop", "Session refresh raced with the redirect; deploys of the console looped."),
    ("Deployment succeeded", "Preview deployment of the console succeeded after the retry."),
    ("Billing job advisory locks", "Two workers take a Postgres advisory lock before charging."),
    ("Flaky login test", "The login test fails when session refresh is slow; the deploy was not affected."),
    ("Rate limits", "The public API allows 100 requests per minute per key; failing clients should back off."),
    ("Résumé of the incident", "Café outage: the cache failed, failing over took 4 minutes. Deployed a fix."),
]


def _observations(prefix: str) -> list[ObservationIn]:
    return [
        ObservationIn.model_validate(
            {
                "id": f"{prefix}{i}",
                "source": "manual",
                "observationType": "note",
                "occurredAt": NOW,
                "title": title,
                "content": text,
            }
        )
        for i, (title, text) in enumerate(TEXTS)
    ]


def _service(settings: Settings) -> Service:
    return Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)


QUERIES = ["deploy failed", "why did the deploy fail", "session refresh redirect", "cafe resume", "console", "zzz"]


def _two_workspaces(settings: Settings) -> SqliteStore:
    # The same texts in two workspaces (BM25's idf counts every row of the table)
    service = _service(settings)
    service.index("acme", _observations("a"))
    service.index("rival", _observations("r")[:4])
    store = service.store
    assert isinstance(store, SqliteStore)
    return store


@pytest.mark.parametrize("query", QUERIES)
def test_the_bm25_oracle_is_fts5s_own_bm25_at_fts5s_parameters(settings: Settings, query: str) -> None:
    # Given the brute-force BM25 the tests compare the mirror with, at FTS5's built-in k1 and b
    store = _two_workspaces(settings)
    conn = store._reader().conn
    oracle = bm25_by_chunk(conn, query, k1=1.2, b=0.75)
    # Then it is FTS5's own bm25() for every matching chunk (FTS5 is the reference of the formula)
    match = fts_query(query)
    fts5 = dict(
        conn.execute("SELECT rowid, -bm25(chunks_fts, 2.0, 1.0) FROM chunks_fts WHERE chunks_fts MATCH ?", (match,))
    )
    assert {rowid: round(score, 6) for rowid, score in oracle.items()} == {
        rowid: round(score, 6) for rowid, score in fts5.items()
    }


@pytest.mark.parametrize("query", QUERIES)
def test_lexical_ranking_and_scores_equal_bm25_with_the_stores_k1_and_b(settings: Settings, query: str) -> None:
    store = _two_workspaces(settings)
    # When the mirror retrieves lexically for acme
    hits = store.retrieve("acme", text=query, vector=None, model_id=None, flt=Filter(live_at=NOW), limit=50).lexical
    # Then it returns the BM25 (k1 and b of neural_memory.domain.bm25) of every acme chunk holding a query
    # word, best first, relative to the best
    conn = store._reader().conn
    acme = dict(
        conn.execute(
            "SELECT c.rowid, o.id FROM chunks c JOIN observations o ON o.pk = c.obs_pk WHERE o.workspace_id = 'acme'"
        )
    )
    reference = {acme[rowid]: score for rowid, score in bm25_by_chunk(conn, query, bm25.K1, bm25.B, "acme").items()}
    assert {h.observation.id for h in hits} == set(reference)
    if reference:
        best = max(reference.values())
        assert {h.observation.id: round(h.score, 4) for h in hits} == {
            k: round(v / best, 4) for k, v in reference.items()
        }
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_another_writer_is_seen_and_replacements_replace(settings: Settings) -> None:
    # Given a store whose mirror is loaded
    service = _service(settings)
    service.index("acme", _observations("a"))
    flt = Filter(live_at=NOW)
    first = service.store.retrieve("acme", text="advisory", vector=None, model_id=None, flt=flt, limit=10)
    assert [h.observation.id for h in first.lexical] == ["a3"]
    # When another process (another store on the same file) writes
    other = _service(settings)
    other.index("acme", [_observations("b")[3]])
    # Then the first store's next search sees it
    seen = service.store.retrieve("acme", text="advisory", vector=None, model_id=None, flt=flt, limit=10)
    assert sorted(h.observation.id for h in seen.lexical) == ["a3", "b3"]
    # When an observation is replaced with other text through the first store
    replaced = _observations("a")[3].model_copy(update={"title": "Queue workers", "content": "Now uses SQS."})
    service.index("acme", [replaced])
    # Then the old words no longer find it and the new ones do, lexically and by vector
    after = service.store.retrieve("acme", text="advisory", vector=None, model_id=None, flt=flt, limit=10)
    assert [h.observation.id for h in after.lexical] == ["b3"]
    vector = HashEmbedder().embed(["Queue workers Now uses SQS"], "search_query")[0]
    now_found = service.store.retrieve(
        "acme", text="sqs", vector=vector, model_id=HashEmbedder().model_id, flt=flt, limit=1
    )
    assert [h.observation.id for h in now_found.lexical] == ["a3"]
    assert [h.observation.id for h in now_found.vector] == ["a3"]
