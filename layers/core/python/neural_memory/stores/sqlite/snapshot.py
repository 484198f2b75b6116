"""The mirror's snapshot beside the database: written atomically (mode 0600) after a rebuild, read
back at the same generation so a restart loads in a moment instead of rebuilding from SQLite. It is
the mirror's own persistence, so it reads and fills ``ChunkMirror``'s arrays directly."""

from __future__ import annotations

import json
import os
import uuid
import zipfile
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from neural_memory.stores.sqlite.mirror import COLUMNS, ROW_ARRAYS, ChunkMirror
from neural_memory.stores.sqlite.mirror_search import Postings
from neural_memory.stores.sqlite.partitions import PartitionedVectors

if TYPE_CHECKING:
    from pathlib import Path

SNAPSHOT_FORMAT = 6  # 5: the archived column; 6: the trust column


def save_snapshot(mirror: ChunkMirror, path: Path) -> None:
    """Write what the mirror holds next to the database (atomically, mode 0600), so a restart at
    the same generation loads it in a moment instead of rebuilding it from SQLite."""
    n = mirror._size
    live = mirror._alive[:n]
    terms: list[str] = []
    offsets, positions, frequencies = [0], [], []
    for term, postings in mirror._postings.items():
        at, weight = postings.arrays()
        keep = live[at]
        if keep.any():
            terms.append(term)
            positions.append(at[keep])
            frequencies.append(weight[keep])
            offsets.append(offsets[-1] + int(keep.sum()))
    partitions_file = None
    if mirror.partitioned is not None:
        # faiss reads its own file straight into place; the snapshot names the file it goes with.
        partitions_file = f"{path.stem}.{uuid.uuid4().hex}.faiss"
        temporary = path.with_name(partitions_file + ".tmp")
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        mirror.partitioned.write(temporary)
        os.replace(temporary, path.with_name(partitions_file))
    meta = {
        "format": SNAPSHOT_FORMAT,
        "partitions_file": partitions_file,
        "generation": mirror.generation,
        "model_id": mirror.model_id,
        "dimension": mirror.dimension,
        "live_tokens": mirror._live_tokens,
        "dictionaries": {c: list(d._codes) for c, d in mirror._dicts.items()},
        "terms": terms,
    }
    payload: dict[str, Any] = {f"codes_{c}": mirror._codes[c][:n] for c in COLUMNS}
    payload |= {name: getattr(mirror, f"_{name}")[:n] for name in ROW_ARRAYS}
    payload |= {
        "meta": np.array(json.dumps(meta)),
        "vectors": mirror._vectors[:n] if mirror.partitioned is None else np.zeros((0, mirror.dimension), np.float32),
        "offsets": np.asarray(offsets, dtype=np.int64),
        "positions": np.concatenate(positions) if positions else np.zeros(0, dtype=np.int32),
        "frequencies": np.concatenate(frequencies) if frequencies else np.zeros(0, dtype=np.float32),
    }
    # A name of its own: two processes on one folder (a server stopping, `check`) may save at once.
    temporary = path.with_name(f"{path.name}.{uuid.uuid4().hex}.tmp")
    with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
        np.savez(handle, **payload)
    os.replace(temporary, path)
    for other in path.parent.glob(f"{path.stem}.*.faiss"):
        if other.name != partitions_file:
            other.unlink(missing_ok=True)  # the partitions of an older snapshot


SnapshotState = Literal["current", "stale", "damaged", "absent"]


def snapshot_path(database: Path) -> Path:
    """Where the mirror of the database at ``database`` is saved."""
    return database.with_name(f"{database.stem}.mirror.npz")


def snapshot_state(path: Path, generation: int) -> SnapshotState:
    """How the saved mirror stands against the database at ``generation``: current, stale (saved
    at another generation or by another version: normal while a server runs, it saves on exit),
    damaged (it does not read back whole), or absent."""
    if not path.exists():
        return "absent"
    try:
        with np.load(path, allow_pickle=False) as saved:
            meta = json.loads(str(saved["meta"]))
        if (meta["format"], meta["generation"]) != (SNAPSHOT_FORMAT, generation):
            return "stale"
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError, zipfile.BadZipFile):
        return "damaged"
    return "current" if load_snapshot(path, generation, None) is not None else "damaged"


def load_snapshot(path: Path, generation: int, want: tuple[str, int] | None) -> ChunkMirror | None:
    """The mirror saved at ``generation`` with the vectors of ``want`` (model, dimension; None:
    any, for a search without vectors), or None when there is none, it is stale (another
    generation or model) or it does not read back whole (then it is rebuilt, never used)."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            meta = json.loads(str(saved["meta"]))
            if (meta["format"], meta["generation"]) != (SNAPSHOT_FORMAT, generation):
                return None
            model_id, dimension = meta["model_id"], meta["dimension"]
            if want is not None and (model_id, dimension) != want:
                return None
            partitions_file = meta.get("partitions_file")
            partitioned = PartitionedVectors.read(path.with_name(partitions_file)) if partitions_file else None
            mirror = ChunkMirror(model_id, dimension, generation, partitioned)
            # The arrays np.load made are the mirror's own: assigned, not copied (it grows them
            # on the next write).
            n = len(saved["rowids"])
            if partitioned is None:
                mirror._vectors = saved["vectors"]
            for name in ROW_ARRAYS:
                setattr(mirror, f"_{name}", saved[name])
            for column in COLUMNS:
                mirror._codes[column] = saved[f"codes_{column}"]
                mirror._dicts[column]._codes = {v: i for i, v in enumerate(meta["dictionaries"][column])}
            offsets, positions, frequencies = saved["offsets"], saved["positions"], saved["frequencies"]
            if len(offsets) != len(meta["terms"]) + 1 or offsets[-1] != len(positions) != len(frequencies):
                return None
            if positions.dtype != np.int32 or frequencies.dtype != np.float32:
                return None
            for i, term in enumerate(meta["terms"]):
                postings = mirror._postings[term] = Postings()
                postings._positions = positions[offsets[i] : offsets[i + 1]]  # views of one array
                postings._frequencies = frequencies[offsets[i] : offsets[i + 1]]
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, json.JSONDecodeError, zipfile.BadZipFile):
        # RuntimeError: faiss refusing a damaged partitions file
        return None
    alive = mirror._alive[:n]
    mirror._size = n
    mirror._live = int(alive.sum())
    mirror._live_lexical = int((alive & mirror._lexical[:n]).sum())
    mirror._live_tokens = int(meta["live_tokens"])
    live = np.flatnonzero(alive)
    rowids = mirror._rowids[live]
    mirror._slot = np.full(int(rowids.max(initial=0)) + 1, -1, dtype=np.int32)
    mirror._slot[rowids] = live
    return mirror
