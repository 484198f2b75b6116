"""Snippets centre on the query."""

from __future__ import annotations

from neural_memory.search.snippets import snippet


def test_short_text_is_returned_whole() -> None:
    assert snippet("  a  short\ntext ", "anything", 100) == "a short text"


def test_long_text_is_cut_around_the_first_query_word() -> None:
    # Given a long text whose matching word is far in
    text = "filler " * 100 + "the deploy failed because NEXT_PUBLIC_API_URL was missing " + "tail " * 100
    # When a snippet is taken for a query about it
    cut = snippet(text, "why did the deploy fail", 120)
    # Then it shows the match, marks the cuts, and stays near the limit
    assert "deploy failed" in cut
    assert cut.startswith("…") and cut.endswith("…")
    assert len(cut) <= 122
