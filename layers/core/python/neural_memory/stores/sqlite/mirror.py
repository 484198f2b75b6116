"""An in-memory mirror of the embedded store's chunks: the columns filters need, the vectors of
one embedding model, and BM25 postings taken from FTS5's own index.

SQLite (with FTS5) is the source of truth; this mirror makes retrieval a few vectorised numpy
passes (``mirror_search.py``). Both retrievers apply the same filter as a boolean mask *before*
their top-k cut, so a filtered search still returns ``limit`` hits, and both are exact: the vector
side is a full dot product, the lexical side is FTS5's own bm25() formula over FTS5's own terms.
Its snapshot on disk is ``snapshot.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from neural_memory.stores.sqlite.mirror_search import MirrorSearch, Postings
from neural_memory.stores.sqlite.partitions import TRAINING_SAMPLE, PartitionedVectors, partitions_for

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from numpy.typing import NDArray

    from neural_memory.domain.filters import MetadataScalar

NO_EXPIRY = np.iinfo(np.int64).max
NULL_CODE = -1
_INITIAL_CAPACITY = 1024


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


class ColumnDictionary:
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


COLUMNS = ("workspace", "source", "observation_type", "actor_name", "tier", "session_id", "trust")
ROW_ARRAYS = ("has_vector", "rowids", "alive", "lexical", "length", "occurred", "expires", "archived")


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


class ChunkMirror(MirrorSearch):
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
        self._dicts: dict[str, ColumnDictionary] = {c: ColumnDictionary() for c in COLUMNS}
        self._postings: dict[str, Postings] = {}
        self._unsettled: set[str] = set()
        # BM25's statistics per workspace, for the rows as they were at the key (see _statistics).
        self._statistics = {}
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
