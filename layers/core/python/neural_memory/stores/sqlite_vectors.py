"""An in-memory mirror of the embedded store's vectors, with the columns filters need.

SQLite keeps the vectors (as float32 blobs) and is the source of truth; this index holds them
in one numpy matrix beside dictionary-encoded filter columns, so a filtered k-NN over 100k
chunks is an exact brute-force dot product and a boolean mask: a few milliseconds, and the
filter applies before the top-k cut, so filtered search still returns ``limit`` hits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from neural_memory.clock import to_ms

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from numpy.typing import NDArray

    from neural_memory.filters import Filter

NO_EXPIRY = np.iinfo(np.int64).max
NULL_CODE = -1
_INITIAL_CAPACITY = 1024
# Below this share of matching rows it is cheaper to gather the rows than to score them all.
_GATHER_BELOW = 0.25


@dataclass(frozen=True, slots=True)
class VectorRow:
    """One embedded chunk and the attributes of its observation that filters look at."""

    chunk_rowid: int
    vector: NDArray[np.float32]
    workspace_id: str
    source: str
    observation_type: str
    actor_name: str | None
    tier: str
    session_id: str | None
    occurred_ms: int
    expires_ms: int | None


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

    def known(self, values: Iterable[str]) -> NDArray[np.int32]:
        """Codes of the values seen so far (values never seen cannot match anything)."""
        return np.array([self._codes[v] for v in values if v in self._codes], dtype=np.int32)

    def get(self, value: str) -> int | None:
        return self._codes.get(value)


_COLUMNS = ("workspace", "source", "observation_type", "actor_name", "tier", "session_id")


class VectorIndex:
    """Unit vectors of one model with filter columns; positions are reused only after a rebuild."""

    def __init__(self, dimension: int, generation: int = 0) -> None:
        self.dimension = dimension
        self.generation = generation
        self._size = 0
        self._vectors: NDArray[np.float32] = np.zeros((_INITIAL_CAPACITY, dimension), dtype=np.float32)
        self._rowids: NDArray[np.int64] = np.zeros(_INITIAL_CAPACITY, dtype=np.int64)
        self._alive: NDArray[np.bool_] = np.zeros(_INITIAL_CAPACITY, dtype=bool)
        self._occurred: NDArray[np.int64] = np.zeros(_INITIAL_CAPACITY, dtype=np.int64)
        self._expires: NDArray[np.int64] = np.zeros(_INITIAL_CAPACITY, dtype=np.int64)
        self._codes: dict[str, NDArray[np.int32]] = {c: np.zeros(_INITIAL_CAPACITY, dtype=np.int32) for c in _COLUMNS}
        self._dicts: dict[str, _Dictionary] = {c: _Dictionary() for c in _COLUMNS}
        self._position: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._position)

    def _grow(self, needed: int) -> None:
        capacity = self._vectors.shape[0]
        if needed <= capacity:
            return
        new = max(needed, capacity * 2)
        self._vectors = np.resize(self._vectors, (new, self.dimension))
        self._rowids = np.resize(self._rowids, new)
        self._alive = np.resize(self._alive, new)
        self._alive[capacity:] = False
        self._occurred = np.resize(self._occurred, new)
        self._expires = np.resize(self._expires, new)
        for column in _COLUMNS:
            self._codes[column] = np.resize(self._codes[column], new)

    def add(self, rows: Sequence[VectorRow]) -> None:
        """Append rows; a chunk already present is replaced."""
        self.remove(row.chunk_rowid for row in rows)
        self._grow(self._size + len(rows))
        for row in rows:
            at = self._size
            self._vectors[at] = row.vector
            self._rowids[at] = row.chunk_rowid
            self._alive[at] = True
            self._occurred[at] = row.occurred_ms
            self._expires[at] = NO_EXPIRY if row.expires_ms is None else row.expires_ms
            values = (row.workspace_id, row.source, row.observation_type, row.actor_name, row.tier, row.session_id)
            for column, value in zip(_COLUMNS, values, strict=True):
                self._codes[column][at] = self._dicts[column].encode(value)
            self._position[row.chunk_rowid] = at
            self._size += 1

    def remove(self, chunk_rowids: Iterable[int]) -> None:
        """Forget these chunks (unknown ids are ignored)."""
        for rowid in chunk_rowids:
            at = self._position.pop(rowid, None)
            if at is not None:
                self._alive[at] = False

    def mask(self, workspace_id: str, flt: Filter) -> NDArray[np.bool_]:
        """Rows of ``workspace_id`` that pass ``flt`` (the numpy rendering of the neutral filter)."""
        n = self._size
        workspace = self._dicts["workspace"].get(workspace_id)
        if workspace is None:
            return np.zeros(n, dtype=bool)
        keep = self._alive[:n] & (self._codes["workspace"][:n] == workspace)
        keep &= self._expires[:n] > to_ms(flt.live_at)
        for column, values in (
            ("source", flt.sources),
            ("observation_type", flt.observation_types),
            ("actor_name", flt.actor_names),
            ("tier", flt.tiers),
        ):
            if values:
                keep &= np.isin(self._codes[column][:n], self._dicts[column].known(values))
        if flt.occurred_from is not None:
            keep &= self._occurred[:n] >= to_ms(flt.occurred_from)
        if flt.occurred_to is not None:
            keep &= self._occurred[:n] <= to_ms(flt.occurred_to)
        if flt.exclude_session_id is not None:
            session = self._dicts["session_id"].get(flt.exclude_session_id)
            if session is not None:
                keep &= self._codes["session_id"][:n] != session
        result: NDArray[np.bool_] = keep
        return result

    def search(self, workspace_id: str, flt: Filter, query: NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
        """The ``limit`` best (chunk rowid, cosine clipped to [0, 1]) among rows passing the filter."""
        n = self._size
        if n == 0 or limit <= 0:
            return []
        rows = np.flatnonzero(self.mask(workspace_id, flt))
        if rows.size == 0:
            return []
        gather = rows.size < n * _GATHER_BELOW
        scores = self._vectors[rows] @ query if gather else (self._vectors[:n] @ query)[rows]
        k = min(limit, rows.size)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._rowids[rows[i]]), float(min(1.0, max(0.0, scores[i])))) for i in top]
