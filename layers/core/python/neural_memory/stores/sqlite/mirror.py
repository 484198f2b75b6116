"""An in-memory mirror of the embedded store's chunks: the columns filters need, the vectors of
one embedding model, and BM25 postings taken from FTS5's own index.

SQLite (with FTS5) is the source of truth; this mirror makes retrieval a few vectorised numpy
passes. Both retrievers apply the same filter as a boolean mask *before* their top-k cut, so a
filtered search still returns ``limit`` hits, and both are exact: the vector side is a full dot
product, the lexical side is FTS5's own bm25() formula over FTS5's own terms. Its snapshot on disk
is ``snapshot.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from neural_memory.clock import to_ms
from neural_memory.search.bm25 import K1 as BM25_K1
from neural_memory.search.bm25 import B as BM25_B
from neural_memory.stores.sqlite.partitions import TRAINING_SAMPLE, PartitionedVectors, partitions_for

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from numpy.typing import NDArray

    from neural_memory.search.filters.model import Filter, MetadataScalar

NO_EXPIRY = np.iinfo(np.int64).max
NULL_CODE = -1
_INITIAL_CAPACITY = 1024
# Below this share of matching rows it is cheaper to gather the rows than to score them all.
_GATHER_BELOW = 0.25
_MIN_IDF = 1e-6  # as FTS5: a term in more than half the rows still counts a little


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """One chunk: the attributes of its observation that filters look at, its vector (if embedded
    by the mirror's model) and its terms (weighted frequency per FTS5 term) and token count;
    ``lexical`` False for a passage, which has no FTS5 row and counts in no BM25 statistic."""

    chunk_rowid: int
    workspace_id: str
    source: str
    observation_type: str
    actor_name: str | None
    tier: str
    session_id: str | None
    occurred_ms: int
    expires_ms: int | None
    vector: NDArray[np.float32] | None = None
    terms: Mapping[str, float] = field(default_factory=dict)
    length: int = 0
    lexical: bool = True
    archived: bool = False
    trust: str | None = None


class _Dictionary:
    """Maps the distinct strings of one column to small integer codes (None → ``NULL_CODE``)."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}

    def encode(self, value: str | None) -> int:
        if value is None:
            return NULL_CODE
        code = self._codes.get(value)
        if code is None:
            code = self._codes[value] = len(self._codes)
        return code

    def lookup(self, values: Iterable[str]) -> NDArray[np.bool_]:
        """A table indexed by ``code + 1`` that is True for the codes of ``values`` (values never
        seen match nothing; index 0 is ``NULL_CODE``, which never matches)."""
        table = np.zeros(len(self._codes) + 1, dtype=bool)
        table[[self._codes[v] + 1 for v in values if v in self._codes]] = True
        return table

    def get(self, value: str) -> int | None:
        return self._codes.get(value)


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


COLUMNS = ("workspace", "source", "observation_type", "actor_name", "tier", "session_id", "trust")
ROW_ARRAYS = ("has_vector", "rowids", "alive", "lexical", "length", "occurred", "expires", "archived")


_STATISTICS_KEPT = 16  # workspaces whose BM25 statistics are kept between writes


@dataclass(frozen=True)
class _Statistics:
    """One workspace's BM25 statistics, for the mirror's rows as they were at ``key``."""

    key: tuple[int, int, int, str]
    members: NDArray[np.bool_]  # the workspace's live rows with an FTS5 row
    rows: int
    norms: NDArray[np.float32]


class RowLookup(Protocol):
    """What the mirror does not hold, read from the database in the search's own transaction."""

    def metadata(self, pairs: Sequence[tuple[str, MetadataScalar]]) -> NDArray[np.int64]:
        """Chunk rowids of the workspace whose observation has every (key, value) pair."""
        ...

    def superseded(self) -> NDArray[np.int64]:
        """Chunk rowids of the workspace whose observation another one supersedes."""
        ...

    def created_by(self, names: Sequence[str]) -> NDArray[np.int64]:
        """Chunk rowids of the workspace whose observation one of these keys wrote."""
        ...

    def stale(self) -> NDArray[np.int64]:
        """Chunk rowids of the workspace whose observation is marked possibly stale."""
        ...

    def flagged(self) -> NDArray[np.int64]:
        """Chunk rowids of the workspace whose observation is flagged for review."""
        ...


class ChunkMirror:
    """Every chunk of the store; vectors of ``model_id`` only. Positions are never reused: a
    replaced or deleted chunk is marked dead, and the mirror is rebuilt on the next load.

    Searches only read, so any number may run at once; a change (``add``, ``remove``, bulk
    loading ending in ``settle``) must have the mirror to itself (``SqliteStore`` holds a
    readers-writer lock)."""

    def __init__(
        self,
        model_id: str | None,
        dimension: int,
        generation: int = 0,
        partitioned: PartitionedVectors | None = None,
    ) -> None:
        """``partitioned``: keep vectors compressed in partitions (large stores) instead of as a
        float32 matrix; vector search is then approximate and its hits are re-scored by the store."""
        self.model_id = model_id
        self.dimension = dimension
        self.generation = generation
        self.partitioned = partitioned
        self._size = 0
        self._live = 0
        self._live_lexical = 0  # live rows with an FTS5 row: BM25's document count
        self._live_tokens = 0
        rows = 0 if partitioned is not None else _INITIAL_CAPACITY
        self._vectors: NDArray[np.float32] = np.zeros((rows, dimension), dtype=np.float32)
        self._has_vector: NDArray[np.bool_] = np.zeros(_INITIAL_CAPACITY, dtype=bool)
        self._rowids: NDArray[np.int64] = np.zeros(_INITIAL_CAPACITY, dtype=np.int64)
        self._alive: NDArray[np.bool_] = np.zeros(_INITIAL_CAPACITY, dtype=bool)
        self._lexical: NDArray[np.bool_] = np.zeros(_INITIAL_CAPACITY, dtype=bool)
        self._length: NDArray[np.float32] = np.zeros(_INITIAL_CAPACITY, dtype=np.float32)
        self._occurred: NDArray[np.int64] = np.zeros(_INITIAL_CAPACITY, dtype=np.int64)
        self._expires: NDArray[np.int64] = np.zeros(_INITIAL_CAPACITY, dtype=np.int64)
        # Archived (E tier, by the maintenance): most E rows in time, so a column, not a lookup.
        self._archived: NDArray[np.bool_] = np.zeros(_INITIAL_CAPACITY, dtype=bool)
        self._codes: dict[str, NDArray[np.int32]] = {c: np.zeros(_INITIAL_CAPACITY, dtype=np.int32) for c in COLUMNS}
        self._dicts: dict[str, _Dictionary] = {c: _Dictionary() for c in COLUMNS}
        self._postings: dict[str, Postings] = {}
        self._unsettled: set[str] = set()
        # BM25's statistics per workspace, for the rows as they were at the key (see _statistics).
        self._statistics: dict[str, _Statistics] = {}
        # Position of each live chunk by rowid (-1: none); rowids are SQLite's, dense and small.
        self._slot: NDArray[np.int32] = np.full(_INITIAL_CAPACITY, -1, dtype=np.int32)

    def __len__(self) -> int:
        return self._live

    def _grow(self, needed: int) -> None:
        capacity = self._rowids.shape[0]
        if needed <= capacity:
            return
        new = max(needed, capacity * 2)
        if self.partitioned is None:
            self._vectors = np.resize(self._vectors, (new, self.dimension))
        for array in ROW_ARRAYS:
            grown = np.resize(getattr(self, f"_{array}"), new)
            grown[capacity:] = 0
            setattr(self, f"_{array}", grown)
        for column in COLUMNS:
            self._codes[column] = np.resize(self._codes[column], new)

    def add(self, rows: Sequence[ChunkRow]) -> None:
        """Append rows; a chunk already present is replaced."""
        self.remove(row.chunk_rowid for row in rows)
        self._grow(self._size + len(rows))
        embedded: list[tuple[int, NDArray[np.float32]]] = []
        for row in rows:
            at = self._size
            if row.vector is not None and row.vector.shape == (self.dimension,):
                embedded.append((at, row.vector))
            self._rowids[at] = row.chunk_rowid
            self._alive[at] = True
            self._lexical[at] = row.lexical
            self._length[at] = row.length
            self._occurred[at] = row.occurred_ms
            self._expires[at] = NO_EXPIRY if row.expires_ms is None else row.expires_ms
            self._archived[at] = row.archived
            values = (
                row.workspace_id, row.source, row.observation_type, row.actor_name, row.tier, row.session_id, row.trust
            )  # fmt: skip
            for column, value in zip(COLUMNS, values, strict=True):
                self._codes[column][at] = self._dicts[column].encode(value)
            for term, frequency in row.terms.items():
                self.add_posting(term, at, frequency)
            self._set_slot(row.chunk_rowid, at)
            self._size += 1
            self._live += 1
            self._live_lexical += int(row.lexical)
            self._live_tokens += row.length
        if embedded:
            positions, vectors = zip(*embedded, strict=True)
            self.add_vectors(np.asarray(positions, dtype=np.int64), np.stack(vectors))
        self.settle()

    def add_vectors(self, positions: NDArray[np.int64], vectors: NDArray[np.float32]) -> None:
        """Give the rows at ``positions`` their vectors (of the mirror's model)."""
        self._has_vector[positions] = True
        if self.partitioned is not None:
            self.partitioned.add(positions, vectors)
        else:
            self._vectors[positions] = vectors

    def _set_slot(self, rowid: int, position: int) -> None:
        if rowid >= self._slot.shape[0]:
            grown = np.full(max(rowid + 1, 2 * self._slot.shape[0]), -1, dtype=np.int32)
            grown[: self._slot.shape[0]] = self._slot
            self._slot = grown
        self._slot[rowid] = position

    def partition_if_large(self, threshold: int) -> bool:
        """Move the float32 vectors into partitions once the mirror holds ``threshold`` live
        ones (a store that grew, or a snapshot saved when it was smaller); True if it did."""
        if self.partitioned is not None:
            return False
        n = self._size
        rows = np.flatnonzero(self._has_vector[:n] & self._alive[:n])
        if rows.size < threshold:
            return False
        sample = rows[:: max(rows.size // TRAINING_SAMPLE, 1)]
        partitioned = PartitionedVectors.train(self._vectors[sample], partitions_for(rows.size))
        for start in range(0, rows.size, 65536):
            chunk = rows[start : start + 65536]
            partitioned.add(chunk, self._vectors[chunk])
        self._has_vector[:n] = False
        self._has_vector[rows] = True  # dead rows' vectors were not carried over
        self.partitioned = partitioned
        self._vectors = np.zeros((0, self.dimension), dtype=np.float32)
        return True

    def position_of(self, chunk_rowid: int) -> int | None:
        """Where a chunk sits (for bulk loading of postings)."""
        if 0 <= chunk_rowid < self._slot.shape[0] and (at := int(self._slot[chunk_rowid])) >= 0:
            return at
        return None

    def slots(self) -> list[int]:
        """Position by rowid (-1: none), as a list, for bulk loading."""
        slots: list[int] = self._slot.tolist()
        return slots

    def positions_of(self, chunk_rowids: NDArray[np.int64]) -> NDArray[np.int64]:
        """``position_of`` for many rowids at once (-1 where absent)."""
        inside = (chunk_rowids >= 0) & (chunk_rowids < self._slot.shape[0])
        out = np.full(chunk_rowids.shape, -1, dtype=np.int64)
        out[inside] = self._slot[chunk_rowids[inside]]
        return out

    def add_posting(self, term: str, position: int, frequency: float) -> None:
        """Record that the chunk at ``position`` holds ``term`` (weighted frequency)."""
        postings = self._postings.get(term)
        if postings is None:
            postings = self._postings[term] = Postings()
        postings.append(position, frequency)
        self._unsettled.add(term)

    def settle(self) -> None:
        """Merge the postings appended since the last call (before searches may read them)."""
        for term in self._unsettled:
            self._postings[term].settle()
        self._unsettled.clear()

    def set_length(self, position: int, length: int) -> None:
        """Set a chunk's token count (bulk loading)."""
        self._live_tokens += length - int(self._length[position])
        self._length[position] = length

    def restate(self, chunk_rowids: Iterable[int], *, tier: str, expires_ms: int | None, archived: bool) -> None:
        """Give these chunks (of one observation) another tier, expiry and archived mark in place:
        a promotion (unknown ids are ignored)."""
        positions = [at for rowid in chunk_rowids if (at := self.position_of(rowid)) is not None]
        self._codes["tier"][positions] = self._dicts["tier"].encode(tier)
        self._expires[positions] = NO_EXPIRY if expires_ms is None else expires_ms
        self._archived[positions] = archived

    def archive(self, chunk_rowids: Iterable[int]) -> None:
        """Mark these chunks archived (unknown ids are ignored)."""
        self._archived[[at for rowid in chunk_rowids if (at := self.position_of(rowid)) is not None]] = True

    def remove(self, chunk_rowids: Iterable[int]) -> None:
        """Forget these chunks (unknown ids are ignored)."""
        for rowid in chunk_rowids:
            at = self.position_of(rowid)
            if at is not None:
                self._slot[rowid] = -1
                self._alive[at] = False
                self._live -= 1
                self._live_lexical -= int(self._lexical[at])
                self._live_tokens -= int(self._length[at])

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
        ``neural_memory.search.bm25``, with its statistics (document count, document frequency,
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
