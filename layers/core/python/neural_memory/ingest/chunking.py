"""Token-aware chunking: long content is cut into overlapping windows that fit the embedder.

Tokens are counted as runs of word characters and single punctuation marks, a close, cheap
estimate of a WordPiece count (rare words split into more pieces, so the default window of 200
such tokens stays inside all-MiniLM's 256-token limit for ordinary prose). Windows end at the
last sentence boundary inside them when there is one in their second half, so chunks read well.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_SENTENCE_END = {".", "!", "?"}


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
