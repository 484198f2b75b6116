"""FTS5 text handling for the embedded store: the tokenizer of record, safe query terms, BM25.

FTS5 tokenizes everything (``porter unicode61 remove_diacritics 2``); the in-memory mirror asks
FTS5 for the tokens of new rows and of queries through a scratch table with the same tokenizer,
so both sides always agree on terms.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

TOKENIZE = "porter unicode61 remove_diacritics 2"
# Our column weights: title hits count twice body hits (BM25's k1 and b: neural_memory.domain.bm25).
COLUMN_WEIGHTS = {"title": 2.0, "text": 1.0}
MAX_QUERY_TERMS = 64

_WORD = re.compile(r"\w+", re.UNICODE)
# Words that carry no topic: as OR terms they match nearly every document and cost the most.
STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does for from had has have how i if in into is it "
    "its me my not of on or our so than that the their them then there these they this to was we were "
    "what when where which who why will with would you your".split()
)


def query_words(text: str) -> list[str]:
    """The distinct words of a query, lower-cased, stopwords dropped unless nothing else is left."""
    words = list(dict.fromkeys(word.lower() for word in _WORD.findall(text)))
    return ([w for w in words if w not in STOPWORDS] or words)[:MAX_QUERY_TERMS]


class Tokenizer:
    """FTS5's tokenizer, reached through a scratch table in the connection's temp schema."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.nm_scratch USING fts5 (title, text, tokenize = '{TOKENIZE}')"
        )
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.nm_scratch_vocab USING fts5vocab (temp, nm_scratch, instance)"
        )

    def rows(self, docs: Sequence[tuple[str, str]]) -> list[tuple[dict[str, float], int]]:
        """For each (title, text): weighted term frequencies and the token count, as FTS5 sees them."""
        out: list[tuple[dict[str, float], int]] = [({}, 0) for _ in docs]
        if not docs:
            return out
        conn = self._conn
        conn.executemany(
            "INSERT INTO temp.nm_scratch (rowid, title, text) VALUES (?, ?, ?)",
            [(i + 1, title, text) for i, (title, text) in enumerate(docs)],
        )
        terms: dict[int, dict[str, float]] = defaultdict(dict)
        lengths: dict[int, int] = defaultdict(int)
        for term, doc, col, count in conn.execute(
            "SELECT term, doc, col, count(*) FROM temp.nm_scratch_vocab GROUP BY term, doc, col"
        ):
            terms[doc][term] = terms[doc].get(term, 0.0) + COLUMN_WEIGHTS[col] * count
            lengths[doc] += count
        conn.execute("DELETE FROM temp.nm_scratch")
        return [(terms.get(i + 1, {}), lengths.get(i + 1, 0)) for i in range(len(docs))]

    def query_terms(self, text: str) -> list[str]:
        """The index terms of a query's words (stopwords dropped), each once."""
        words = query_words(text)
        if not words:
            return []
        ((terms, _),) = self.rows([("", " ".join(words))])
        return list(terms)
