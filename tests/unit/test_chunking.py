"""Token-aware chunking: windows within the token limit, overlapping, cut at sentences, any text."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from neural_memory.domain.chunking import DEFAULT_CHUNKING, Chunking, chunk_text
from neural_memory.domain.tiers import DEFAULT_POLICY
from neural_memory.ingest.prepare import prepare
from neural_memory.models import Chunk, ObservationIn

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


NOW = datetime(2025, 12, 14, tzinfo=UTC)


def _chunks(content: str, chunking: Chunking = DEFAULT_CHUNKING, **fields: Any) -> list[Chunk]:
    body = {"source": "manual", "observationType": "note", "occurredAt": "2025-12-12T10:00:00Z", "content": content}
    observation = ObservationIn.model_validate(body | fields)
    return prepare(observation, now=NOW, policy=DEFAULT_POLICY, ttl_days=7, chunking=chunking).chunks


def test_content_that_fits_a_passage_is_one_chunk_searched_both_ways() -> None:
    assert [(c.chunk_no, c.role) for c in _chunks("The deploy failed on Friday.")] == [(0, "both")]
    assert [c.role for c in _chunks(" ".join(["word"] * 128))] == ["both"]


def test_long_content_is_cut_into_passages_first_then_lexical_windows() -> None:
    # Given 1000 tokens of content
    words = [f"w{n}" for n in range(1000)]
    chunks = _chunks(" ".join(words))
    passages = [c for c in chunks if c.role == "passage"]
    windows = [c for c in chunks if c.role == "lexical"]
    # Then passages come first (chunk 0 is always embedded), numbered without gaps, then windows
    assert [c.chunk_no for c in chunks] == list(range(len(chunks)))
    assert chunks[: len(passages)] == passages and len(passages) > len(windows) > 1
    # And each side covers the whole text within its own size
    for pieces, limit in ((passages, 128), (windows, 200)):
        assert all(len(_tokens(c.text)) <= limit for c in pieces)
        assert set(" ".join(c.text for c in pieces).split()) == set(words)
    assert all(c.embedded and not c.lexical for c in passages)
    assert all(c.lexical and not c.embedded for c in windows)


def test_never_embedded_or_one_size_content_is_cut_once() -> None:
    text = " ".join(f"w{n}" for n in range(1000))
    # A tier that is never embedded needs no passages
    assert {c.role for c in _chunks(text, tier="E")} == {"both"}
    # Nor does a configuration whose passages are as long as the windows (one cut, as before)
    same = _chunks(text, Chunking(tokens=200, overlap=24, passage_tokens=200))
    assert {c.role for c in same} == {"both"} and all(len(_tokens(c.text)) <= 200 for c in same)


def test_a_list_of_paths_is_searched_by_keyword_and_never_embedded() -> None:
    # Given a merged pull request whose content ends with the paths it touched
    body = "Stream multipart bodies instead of reading them whole.\nFiles: src/app/formparser.py, tests/test_form.py"
    observation = ObservationIn.model_validate(
        {
            "id": "pr-9", "source": "github", "observationType": "pull_request_merged", "title": "PR #9 merged",
            "occurredAt": "2025-12-01T00:00:00Z", "content": body,
        }
    )  # fmt: skip
    item = prepare(observation, now=datetime(2025, 12, 2, tzinfo=UTC), policy=DEFAULT_POLICY, ttl_days=7)
    # Then the passage the model reads leaves the paths out, and a lexical window holds them
    embedded = [c.text for c in item.chunks if c.embedded]
    lexical = [c.text for c in item.chunks if c.lexical]
    assert embedded == ["Stream multipart bodies instead of reading them whole.", ""]  # and its title alone
    assert any("src/app/formparser.py" in text for text in lexical)
    assert not any("Files:" in text for text in embedded)


def test_a_title_written_as_a_summary_is_also_a_passage_of_its_own() -> None:
    commits = "Commits:\n" + "\n".join(f"- remove compat helper {n}" for n in range(14))
    # Given a merged PR whose title says what its list of commits did
    chunks = _chunks(commits, observationType="pull_request_merged", title="PR #1693 merged: Drop Python 2")
    # Then it is embedded twice: the content (with the title, as every chunk) and the title alone
    assert [(c.chunk_no, c.role, c.text) for c in chunks] == [(0, "both", commits), (1, "passage", "")]
    # And long content's title passage comes after the content's passages, before the windows
    long = _chunks(" ".join(f"w{n}" for n in range(1000)), title="Why we shard by workspace")
    roles = [c.role for c in long]
    assert roles.count("passage") > 2 and long[roles.index("lexical") - 1].text == ""
    assert [c.chunk_no for c in long] == list(range(len(long)))


def test_no_title_passage_where_the_title_adds_nothing_or_nothing_is_embedded() -> None:
    turn = "I went to the support group yesterday and it was really powerful for me."
    # A chat turn's title is its speaker and first words: derived, not a summary
    assert [c.role for c in _chunks(turn, actorName="Caroline", sessionId="s1")] == ["both"]
    assert [c.role for c in _chunks(turn)] == ["both"]
    # A title with no content is already all that chunk 0 embeds, as with only a list of paths
    assert [c.role for c in _chunks("", title="Deploy frozen")] == ["both"]
    paths = _chunks("Files: src/app/cookies.py, tests/test_cookies.py", title="PR #3 merged: Sign cookies")
    assert [(c.role, c.text) for c in paths if c.embedded] == [("passage", "")]
    # A tier that is never embedded has no passages at all
    assert [c.role for c in _chunks(turn, title="Support group", tier="E")] == ["both"]
