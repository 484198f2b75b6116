"""The reindex compares two indices' keys page by page (``_only_in``): against the set difference."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st
from neural_memory.use_cases.reindexing import _only_in

WHEN = datetime(2025, 12, 1, tzinfo=UTC)
keys = st.sets(st.tuples(st.sampled_from(["acme", "globex", "ünï"]), st.text(min_size=1, max_size=6)), max_size=40)


@given(ours=keys, theirs=keys)
def test_the_keys_only_one_side_holds_are_the_set_difference(
    ours: set[tuple[str, str]], theirs: set[tuple[str, str]]
) -> None:
    # Both sides come in key order, as the indices' (workspace, id) sort gives them
    found = _only_in(((k, WHEN) for k in sorted(ours)), ((k, WHEN) for k in sorted(theirs)))
    assert [key for key, _ in found] == sorted(ours - theirs)
