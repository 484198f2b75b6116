"""Token-aware chunking: long content is cut into overlapping windows that fit the embedder.

Tokens are counted as runs of word characters and single punctuation marks, a close, cheap
estimate of a WordPiece count (rare words split into more pieces, so the default window of 200
such tokens stays inside all-MiniLM's 256-token limit for ordinary prose). Windows end at the
last sentence boundary inside them when there is one in their second half, so chunks read well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_SENTENCE_END = {".", "!", "?"}


@dataclass(frozen=True)
class Chunking:
    """How content is cut: ``tokens``-long windows for BM25, ``passage_tokens``-long windows for
    the embedding model, both overlapping by ``overlap`` tokens (a passage by at most half its
    length). ``passage_tokens`` >= ``tokens`` cuts once, both retrievers on the same chunks.

    Two sizes because the retrievers want different pieces. A sentence-embedding model reads a
    window of at most 256 WordPieces and was trained on pieces of about 128, so a passage of 128
    tokens with the title is read whole for prose and scientific text (all but 2 of SciFact's
    15,071) and means one thing; 200-token windows lost the end of a quarter of SciFact's chunks
    to truncation. BM25 is better on longer pieces (more of a document's words in one place):
    SciFact train keyword nDCG@10 0.7052 at 200 tokens, 0.7014 at 150. Cut separately, hybrid
    nDCG@10 on SciFact train rose from 0.7430 to 0.7495 (docs/benchmarks.md, issue #11's third
    round); short content (chat turns, notes, commits) is one chunk either way.
    """

    tokens: int = 200
    overlap: int = 24
    passage_tokens: int = 128
    # A title written as a summary also gets a passage of its own (``prepare.chunked``); off where
    # nothing embeds.
    title_passages: bool = True


DEFAULT_CHUNKING = Chunking()
# The passages of one observation that are embedded: the first 32 (4,096 tokens at the default 128,
# some 16,000 characters of English). Content is 200,000 characters at most, 300-odd passages, and
# embedding is a write's one expensive step: past this, an observation costs no more to write,
# and its whole content stays searchable by keyword (the BM25 windows cover all of it).
MAX_EMBEDDED_PASSAGES = 32
# A line listing the paths an event touched (the GitHub normalizer's "Files: a, b, ..."): searched
# by its words, never embedded. Paths say nothing a sentence model can read, and at a dozen
# WordPieces each they were most of what an imported pull request cost to embed (the model reads
# 128 words at 21 texts/s here, 16 at 197: docs/benchmarks.md, "Ingest at speed on real history").
PATHS_LINE = "Files: "
DEFINITIONS_LINE = "Changed code: "  # a merged PR's changed functions and classes (``history.definitions``)


def without_path_lists(text: str) -> str:
    """``text`` without its ``PATHS_LINE`` lines: what the embedder reads of it."""
    if PATHS_LINE not in text:
        return text
    return "\n".join(line for line in text.split("\n") if not line.startswith(PATHS_LINE)).strip()


def chunk_text(text: str, max_tokens: int = 200, overlap: int = 24) -> list[str]:
    """``text`` as one chunk if it fits, else overlapping windows of at most ``max_tokens`` tokens."""
    if max_tokens <= 0 or overlap < 0 or overlap >= max_tokens:
        raise ValueError("need max_tokens > overlap >= 0")
    tokens = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]
    if len(tokens) <= max_tokens:
        return [text.strip()] if text.strip() else [""]
    chunks: list[str] = []
    start = 0
    while start < len(tokens):
        end = min(start + max_tokens, len(tokens))
        if end < len(tokens):
            for cut in range(end - 1, start + max_tokens // 2, -1):
                if tokens[cut][2] in _SENTENCE_END:
                    end = cut + 1
                    break
        chunks.append(text[tokens[start][0] : tokens[end - 1][1]].strip())
        if end >= len(tokens):
            break
        start = max(end - overlap, start + 1)
    return chunks


def embedding_text(title: str, chunk_text: str) -> str:
    """What the embedder sees for a chunk: the observation's title, then the chunk."""
    return f"{title}\n{chunk_text}".strip()
