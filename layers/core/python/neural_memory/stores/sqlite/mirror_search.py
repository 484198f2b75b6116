"""Searching the embedded store's in-memory mirror (``ChunkMirror`` is this class with the rows it
holds): a filter rendered as a boolean mask over the rows, applied *before* each retriever's top-k
cut so a filtered search still returns ``limit`` hits; the vector side a full dot product (or the
partitions' candidates), the lexical side FTS5's own bm25() formula over the postings of FTS5's
own terms, with each workspace's own statistics."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from neural_memory.clock import to_ms
from neural_memory.domain.bm25 import K1 as BM25_K1
from neural_memory.domain.bm25 import B as BM25_B

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import NDArray

    from neural_memory.domain.filters import Filter
    from neural_memory.stores.sqlite.mirror import ColumnDictionary, RowLookup
    from neural_memory.stores.sqlite.partitions import PartitionedVectors


# Below this share of matching rows it is cheaper to gather the rows than to score them all.
_GATHER_BELOW = 0.25
_MIN_IDF = 1e-6  # as FTS5: a term in more than half the rows still counts a little


class Postings:
    """Positions and weighted frequencies of one term; appends are merged by ``settle()``, which
    writers call before readers may look (reads never change anything, so they can run at once)."""

    __slots__ = ("_frequencies", "_pending_f", "_pending_p", "_positions", "_weights")

    def __init__(self) -> None:
        self._positions: NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._frequencies: NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self._pending_p: list[int] = []
        self._pending_f: list[float] = []
        self._weights: tuple[object, NDArray[np.float32]] | None = None

    def append(self, position: int, frequency: float) -> None:
        self._pending_p.append(position)
        self._pending_f.append(frequency)

    def settle(self) -> None:
        if self._pending_p:
            self._positions = np.concatenate([self._positions, np.array(self._pending_p, dtype=np.int32)])
            self._frequencies = np.concatenate([self._frequencies, np.array(self._pending_f, dtype=np.float32)])
            self._pending_p, self._pending_f = [], []

    def arrays(self) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        return self._positions, self._frequencies

    def weights(self, key: object, norms: NDArray[np.float32]) -> NDArray[np.float32]:
        """BM25's term-frequency part per posting, ``tf (k1 + 1) / (tf + norm)``, for the rows'
        length ``norms`` identified by ``key`` (kept until the norms change: between writes, a
        query pays only for the idf multiply and the scatter)."""
        cached = self._weights
        if cached is None or cached[0] != key:
            tf = self._frequencies
            weights = (tf * (BM25_K1 + 1.0) / (tf + norms[self._positions])).astype(np.float32)
            cached = self._weights = (key, weights)
        return cached[1]


_STATISTICS_KEPT = 16  # workspaces whose BM25 statistics are kept between writes


@dataclass(frozen=True)
class _Statistics:
    """One workspace's BM25 statistics, for the mirror's rows as they were at ``key``."""

    key: tuple[int, int, int, str]
    members: NDArray[np.bool_]  # the workspace's live rows with an FTS5 row
    rows: int
    norms: NDArray[np.float32]


class MirrorSearch:
    """The searches of ``ChunkMirror``, over the rows it holds. They only read, so any number may
    run at once."""

    partitioned: PartitionedVectors | None
    _size: int
    _live_lexical: int
    _live_tokens: int
    _vectors: NDArray[np.float32]
    _has_vector: NDArray[np.bool_]
    _rowids: NDArray[np.int64]
    _alive: NDArray[np.bool_]
    _lexical: NDArray[np.bool_]
    _length: NDArray[np.float32]
    _occurred: NDArray[np.int64]
    _expires: NDArray[np.int64]
    _archived: NDArray[np.bool_]
    _codes: dict[str, NDArray[np.int32]]
    _dicts: dict[str, ColumnDictionary]
    _postings: dict[str, Postings]
    _statistics: dict[str, _Statistics]

    if TYPE_CHECKING:

        def positions_of(self, chunk_rowids: NDArray[np.int64]) -> NDArray[np.int64]: ...

    def mask(self, workspace_id: str, flt: Filter, lookup: RowLookup | None = None) -> NDArray[np.bool_]:
        """Rows of ``workspace_id`` that pass ``flt`` (the numpy rendering of the neutral filter).

        The mirror holds neither metadata nor supersession: ``lookup`` reads those rows (without
        it, a metadata filter is an error and nothing counts as superseded).
        """
        n = self._size
        workspace = self._dicts["workspace"].get(workspace_id)
        if workspace is None:
            return np.zeros(n, dtype=bool)
        keep = self._alive[:n] & (self._codes["workspace"][:n] == workspace)
        keep &= self._expires[:n] > to_ms(flt.live_at)
        self._apply_conditions(keep, flt, lookup)
        if flt.any_of:
            either = np.zeros(n, dtype=bool)
            for group in flt.any_of:
                either |= self._apply_conditions(np.ones(n, dtype=bool), group, lookup)
            keep &= either
        if not flt.include_superseded and lookup is not None:
            keep &= ~self._rows_mask(lookup.superseded())
        if flt.fresh_only and lookup is not None:
            keep &= ~self._rows_mask(lookup.stale())
        if flt.stale_only:  # without a lookup no row is known to be stale
            keep &= self._rows_mask(lookup.stale()) if lookup is not None else np.zeros(n, dtype=bool)
        if not flt.include_archived:
            keep &= ~self._archived[:n]
        if flt.flagged is not None:  # without a lookup no row is known to be flagged
            flagged = self._rows_mask(lookup.flagged()) if lookup is not None else np.zeros(n, dtype=bool)
            keep &= flagged if flt.flagged else ~flagged
        if flt.exclude_session_id is not None:
            session = self._dicts["session_id"].get(flt.exclude_session_id)
            if session is not None:
                excluded = self._codes["session_id"][:n] == session
                if flt.exclude_after is not None:
                    excluded &= self._occurred[:n] > to_ms(flt.exclude_after)
                keep &= ~excluded
        result: NDArray[np.bool_] = keep
        return result

    def _apply_conditions(self, keep: NDArray[np.bool_], flt: Filter, lookup: RowLookup | None) -> NDArray[np.bool_]:
        """``keep`` narrowed, in place, to the rows passing one group's conditions (terms,
        exclusions, dates, metadata; any workspace), and returned."""
        n = self._size
        for column, values in flt.terms():
            keep &= self._dicts[column].lookup(values)[self._codes[column][:n] + 1]
        for column, values in flt.excluded_terms():  # a null never matches, so it is never excluded
            keep &= ~self._dicts[column].lookup(values)[self._codes[column][:n] + 1]
        if flt.occurred_from is not None:
            keep &= self._occurred[:n] >= to_ms(flt.occurred_from)
        if flt.occurred_to is not None:
            keep &= self._occurred[:n] <= to_ms(flt.occurred_to)
        if flt.metadata:
            if lookup is None:
                raise ValueError("a metadata filter needs a RowLookup")
            keep &= self._rows_mask(lookup.metadata(flt.metadata))
        if flt.created_by:
            if lookup is None:
                raise ValueError("a createdBy filter needs a RowLookup")
            keep &= self._rows_mask(lookup.created_by(flt.created_by))
        return keep

    def _rows_mask(self, chunk_rowids: NDArray[np.int64]) -> NDArray[np.bool_]:
        """True at the positions of these chunk rowids (those the mirror holds)."""
        n = self._size
        positions = self.positions_of(chunk_rowids)
        rows = np.zeros(n, dtype=bool)
        rows[positions[(positions >= 0) & (positions < n)]] = True
        return rows

    def vector_search(self, keep: NDArray[np.bool_], query: NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
        """The ``limit`` best (chunk rowid, cosine clipped to [0, 1]) among embedded rows in ``keep``
        (a ``mask()``)."""
        n = self._size
        if n == 0 or limit <= 0:
            return []
        if self.partitioned is not None:
            found = self.partitioned.search(keep & self._has_vector[:n], query, limit)
            return [(int(self._rowids[at]), min(1.0, max(0.0, score))) for at, score in found]
        rows = np.flatnonzero(keep & self._has_vector[:n])
        if rows.size == 0:
            return []
        gather = rows.size < n * _GATHER_BELOW
        scores = self._vectors[rows] @ query if gather else (self._vectors[:n] @ query)[rows]
        return [(rowid, min(1.0, max(0.0, score))) for rowid, score in self._top(rows, scores, limit)]

    def lexical_search(
        self, keep: NDArray[np.bool_], terms: Sequence[str], limit: int, workspace: str
    ) -> list[tuple[int, float]]:
        """The ``limit`` best (chunk rowid, BM25 / best BM25) among rows in ``keep`` (a ``mask()``
        of ``workspace``) holding any term. BM25 is FTS5's formula, k1 and b from
        ``neural_memory.domain.bm25``, with its statistics (document count, document frequency,
        average length) over the live rows of ``workspace`` that have an FTS5 row (passages have
        none): a workspace's scores never depend on another workspace's data, nor reveal it."""
        n = self._size
        if n == 0 or limit <= 0 or not terms:
            return []
        stats = self._statistics_of(workspace)
        scores = np.zeros(n, dtype=np.float32)
        rows_total = max(stats.rows, 1)
        for term in terms:
            postings = self._postings.get(term)
            if postings is None:
                continue
            positions, _ = postings.arrays()
            # idf counts the workspace's live rows holding the term (FTS5's document frequency).
            hits = int(np.count_nonzero(stats.members[positions]))
            if hits == 0:
                continue
            idf = max(math.log((rows_total - hits + 0.5) / (hits + 0.5)), _MIN_IDF)
            scores[positions] += np.float32(idf) * postings.weights(stats.key, stats.norms)
        # Every posting adds a positive score, so a row holds a term exactly when its score is > 0;
        # rows the filter drops (dead ones and other workspaces' included) are cut here.
        rows = np.flatnonzero(keep & (scores > 0))
        if rows.size == 0:
            return []
        top = self._top(rows, scores[rows], limit)
        best = top[0][1] or 1.0
        return [(rowid, score / best) for rowid, score in top]

    def _statistics_of(self, workspace: str) -> _Statistics:
        """BM25's statistics over ``workspace``'s live lexical rows, and the length normalisation
        per row, ``k1 * (1 - b + b * length / average)``; kept until a write changes the rows."""
        n = self._size
        key = (n, self._live_lexical, self._live_tokens, workspace)
        cached = self._statistics.get(workspace)
        if cached is not None and cached.key == key:
            return cached
        code = self._dicts["workspace"].get(workspace)
        members = self._alive[:n] & self._lexical[:n]
        if code is None:
            members[:] = False
        else:
            members &= self._codes["workspace"][:n] == code
        rows = int(np.count_nonzero(members))
        average = float(self._length[:n][members].sum()) / max(rows, 1) or 1.0
        norms = (BM25_K1 * (1.0 - BM25_B + BM25_B * self._length[:n] / average)).astype(np.float32)
        if len(self._statistics) >= _STATISTICS_KEPT or any(s.key[:3] != key[:3] for s in self._statistics.values()):
            self._statistics = {}  # a write made them all stale (or too many workspaces searched)
        self._statistics[workspace] = stats = _Statistics(key, members, rows, norms)
        return stats

    def _top(self, rows: NDArray[np.int64], scores: NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
        """(chunk rowid, score) of the ``limit`` highest ``scores`` (aligned with ``rows``), best first."""
        k = min(limit, rows.size)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._rowids[rows[i]]), float(scores[i])) for i in top]
