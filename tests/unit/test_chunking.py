"""Token-aware chunking: windows within the token limit, overlapping, cut at sentences, any text."""

from __future__ import annotations

import re

import pytest
from neural_memory.ingest.chunking import chunk_text

TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def _tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def test_short_text_is_one_chunk_and_empty_text_one_empty_chunk() -> None:
    assert chunk_text("  A short note.  ") == ["A short note."]
    assert chunk_text("") == [""]
    assert chunk_text("   \n\t ") == [""]


def test_every_window_fits_the_limit_and_the_text_is_covered_in_order() -> None:
    # Given prose of 1000 tokens
    words = [f"w{n}" for n in range(1000)]
    text = " ".join(words)
    # When chunked with 200-token windows and 24 of overlap
    chunks = chunk_text(text, max_tokens=200, overlap=24)
    # Then no window is over the limit, every word is in some window, and consecutive windows overlap
    assert all(len(_tokens(c)) <= 200 for c in chunks)
    assert set(" ".join(chunks).split()) == set(words)
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert _tokens(before)[-24:] == _tokens(after)[:24]


def test_windows_end_at_a_sentence_boundary_in_their_second_half() -> None:
    sentence = "The deploy failed because the variable was missing. "
    text = sentence * 40  # 10 tokens per sentence
    chunks = chunk_text(text, max_tokens=64, overlap=8)
    assert len(chunks) > 1
    assert all(c.endswith(".") for c in chunks[:-1])


@pytest.mark.parametrize(
    "text",
    [
        "café naïve résumé " * 120,
        "数据库迁移失败 。" * 300,
        "emoji 🚀 deploy ✅ " * 150,
        "a" * 5000,  # one enormous token
    ],
)
def test_unicode_and_degenerate_texts_are_chunked_without_loss(text: str) -> None:
    chunks = chunk_text(text, max_tokens=50, overlap=5)
    assert chunks and all(len(_tokens(c)) <= 50 for c in chunks)
    assert set(_tokens(text)) <= set(_tokens(" ".join(chunks)))


@pytest.mark.parametrize(("max_tokens", "overlap"), [(0, 0), (10, 10), (10, -1), (5, 8)])
def test_impossible_windows_are_refused(max_tokens: int, overlap: int) -> None:
    with pytest.raises(ValueError, match="max_tokens > overlap"):
        chunk_text("text", max_tokens=max_tokens, overlap=overlap)
