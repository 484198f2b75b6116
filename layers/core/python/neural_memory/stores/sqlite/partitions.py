"""The vectors of a large embedded store, compressed and partitioned: faiss IVF-SQ8.

Below ``PARTITION_FROM`` vectors the mirror keeps float32 vectors and scans them all (exact). At
a million, that scan reads 1.5 GB per query and the matrix alone outgrows a laptop's budget, so
the vectors are kept here instead: 8 bits per dimension (a quarter of the memory) in k-means
partitions. A search scores only the partitions nearest the query, and only the rows the filter
keeps (a bitmap, so a filtered search still fills ``limit``); the more selective the filter, the
more partitions it probes, up to all of them. The store then re-scores the candidates with their
exact float32 vectors from SQLite, so the scores it returns are exact cosines; only which rows
become candidates is approximate (recall is measured by ``bench.scale``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from pathlib import Path

    from numpy.typing import NDArray

PARTITION_FROM = 50_000  # vectors; below this the exact float32 scan costs a few ms
TRAINING_SAMPLE = 100_000
BASE_PROBES = 48  # partitions scanned when the filter keeps every row


def _faiss() -> Any:
    import faiss  # the local extra; loaded only for stores this large

    faiss.omp_set_num_threads(1)  # concurrent searches run on their own threads
    return faiss


def partitions_for(count: int) -> int:
    """How many partitions ``count`` vectors get (about 2·sqrt(n), a power of two)."""
    return int(2 ** round(math.log2(max(2 * math.sqrt(count), 64))))


class PartitionedVectors:
    """Vectors by mirror position, in an IVF-SQ8 index (inner product on unit vectors)."""

    def __init__(self, index: Any) -> None:
        self._index = index

    @classmethod
    def train(cls, sample: NDArray[np.float32], partitions: int) -> PartitionedVectors:
        """Learn the partitions and the 8-bit ranges from ``sample`` (unit vectors)."""
        faiss = _faiss()
        dimension = sample.shape[1]
        index = faiss.IndexIVFScalarQuantizer(
            faiss.IndexFlatIP(dimension),
            dimension,
            partitions,
            faiss.ScalarQuantizer.QT_8bit,
            faiss.METRIC_INNER_PRODUCT,
        )
        index.cp.min_points_per_centroid = 1  # a small sample trains fewer points per partition, fine
        index.train(np.ascontiguousarray(sample, dtype=np.float32))
        return cls(index)

    def __len__(self) -> int:
        count: int = self._index.ntotal
        return count

    def add(self, positions: NDArray[np.int64], vectors: NDArray[np.float32]) -> None:
        """Index ``vectors`` under their mirror ``positions``."""
        if len(positions):
            self._index.add_with_ids(
                np.ascontiguousarray(vectors, dtype=np.float32), np.ascontiguousarray(positions, dtype=np.int64)
            )

    def search(self, keep: NDArray[np.bool_], query: NDArray[np.float32], limit: int) -> list[tuple[int, float]]:
        """Up to ``limit`` (position, approximate cosine) among positions where ``keep`` is True."""
        faiss = _faiss()
        kept = int(keep.sum())
        if kept == 0 or limit <= 0:
            return []
        share = kept / max(len(self), 1)
        partitions = self._index.nlist
        probes = min(partitions, max(BASE_PROBES, math.ceil(BASE_PROBES / max(share, 1e-9))))
        bitmap = np.packbits(keep, bitorder="little")
        selector = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))  # n: bytes
        params = faiss.SearchParametersIVF(nprobe=probes, sel=selector)
        scores, positions = self._index.search(query.reshape(1, -1).astype(np.float32), limit, params=params)
        return [(int(p), float(s)) for p, s in zip(positions[0], scores[0], strict=True) if p >= 0]

    def write(self, path: Path) -> None:
        """Save the index to ``path`` (a snapshot's companion file; the caller makes it atomic)."""
        _faiss().write_index(self._index, str(path))

    @classmethod
    def read(cls, path: Path) -> PartitionedVectors:
        """The index saved by ``write`` (read straight into place: no second copy in memory)."""
        return cls(_faiss().read_index(str(path)))
