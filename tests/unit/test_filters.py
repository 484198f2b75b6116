"""The neutral filter, and its SQL rendering (the tests' oracle): values only ever travel as bound parameters."""

from __future__ import annotations

from datetime import UTC, datetime

from neural_memory.domain.filters import Filter, compile_filter, metadata_term, metadata_terms
from neural_memory.models import SearchFilters

from tests.helpers.sql_oracle import render_sqlite

NOW = datetime(2025, 12, 14, tzinfo=UTC)


def test_no_filters_still_excludes_expired() -> None:
    # Given no API filters
    # When compiled and rendered
    where, params = render_sqlite(compile_filter(None, live_at=NOW, exclude_session_id=None))
    # Then only the TTL, supersession and archive conditions remain
    assert where == "(o.expires_at IS NULL OR o.expires_at > ?) AND o.superseded_by IS NULL AND o.archived_at IS NULL"
    assert params == [int(NOW.timestamp() * 1000)]


def test_every_clause_renders_with_placeholders() -> None:
    # Given every filter at once, with hostile values
    filters = SearchFilters.model_validate(
        {
            "sourceTypes": ["github", "github", "vercel"],
            "observationTypes": ["push"],
            "actorNames": ["o'brien\"); DROP TABLE observations; --"],
            "tiers": ["A", "C"],
            "dateRange": {"start": "2025-12-01T00:00:00Z", "end": "2025-12-02T00:00:00Z"},
        }
    )
    flt = compile_filter(filters, live_at=NOW, exclude_session_id="sess-42")
    # When rendered
    where, params = render_sqlite(flt, "o")
    # Then duplicates are gone, each clause is present, and no value appears in the SQL text
    assert flt.sources == ("github", "vercel")
    assert "o.source IN (?, ?)" in where
    assert "o.observation_type IN (?)" in where
    assert "o.actor_name IN (?)" in where
    assert "o.tier IN (?, ?)" in where
    assert "o.occurred_at >= ?" in where and "o.occurred_at <= ?" in where
    assert "(o.session_id IS NULL OR o.session_id != ?)" in where
    assert "DROP" not in where
    assert "o'brien\"); DROP TABLE observations; --" in params
    assert where.count("?") == len(params)


def test_filter_is_immutable_data() -> None:
    # Given a filter
    flt = Filter(live_at=NOW, tiers=("A",))
    # Then it is hashable, comparable plain data
    assert flt == Filter(live_at=NOW, tiers=("A",))
    assert hash(flt) == hash(Filter(live_at=NOW, tiers=("A",)))


def test_metadata_terms_are_typed_and_leave_out_what_no_filter_can_match() -> None:
    # Given metadata with every kind of value, and a string longer than a filter value may be
    metadata = {"pr": 42, "ratio": 42.0, "urgent": True, "repo": "acme/api", "long": "x" * 501, "labels": ["bug"]}
    metadata |= {"huge": 10**400, "zero": -0.0}
    # When indexed as keywords
    terms = metadata_terms(metadata)
    # Then 42 and 42.0 are one term, true is not 1, -0.0 is 0, and the long string, the list and
    # the integer no double holds exactly are left out
    assert terms == ['"pr"=n:42.0', '"ratio"=n:42.0', '"urgent"=b:true', '"repo"=s:acme/api', '"zero"=n:0.0']
    assert metadata_term("pr", 42) == metadata_term("pr", 42.0) != metadata_term("pr", "42")
    # And a key holding the separator cannot pose as another key's value
    assert metadata_term("a=s:x", "y") != metadata_term("a", "x=s:y")
