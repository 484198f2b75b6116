"""Upsert throughput of the embedded store, this tree against an earlier revision, interleaved.

    python -m bench.store_writes --base 3a13448 [--head REV] [--size 100000] [--batch 1000] [--round 1]
        [--profile DIR] [--synchronous normal|full] [--head-sql SQL ...]

What ``bench.search_latency``'s ``build()`` times while indexing: ``SqliteStore.write("bench",
items[start:start + 1000])`` of prepared records whose vectors are already set, into one store
growing to ``--size`` observations. Two worker processes do it, one importing this tree's
``neural_memory`` (or ``--head``'s, to measure an earlier state of the branch), the other the
base revision's (``git archive`` of its layer, as ``bench.compare_revisions`` does), each into
its own fresh store in its own temporary folder. The driver alternates them in rounds of
``--round`` batches, flipping which goes first each round, so a burst of load on the shared
machine lands on both; both stores grow in step.

Each worker prepares the items once, before any timing, with its own revision's ``prepare`` (the
record model changed between revisions) from the same synthetic ``ObservationIn`` data
(``bench.synthetic``, same seed and clock), and sets the same vectors. The vectors are
deterministic random unit vectors of the local model's dimension (384), not the model's: a write
stores a float32 blob of the same size whatever its values, so the model would only add minutes
of embedding (and a model load per worker) to a benchmark of the write path.

Printed: each side's observations/s overall and over the last 10k, the median of the per-batch
rates of the last 10k, head/base ratios, and the bytes each side's upserts passed to ``write``
per observation (WAL frames, spills and checkpoints; from ``/proc/self/io``, so the same
whatever else the machine does). ``--profile DIR`` writes each worker's cProfile of its upserts
to ``DIR/{head,base}.prof``; ``--head-sql`` runs a statement on head's write connection before its
first upsert (``DROP INDEX ...``, ``PRAGMA cache_size = ...``: what one thing costs).
``--synchronous`` opens the stores that take the choice so; by default each revision opens its
store as it does by default (3a13448 always wrote with ``normal``; this tree defaults to ``full``,
the WAL synced at every commit).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import inspect
import json
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import numpy as np

from bench.compare_revisions import LAYER, RESULT, ROOT, RevisionProcess, export_layer

DIMENSION = 384  # the local model's (all-MiniLM-L6-v2)
MODEL_ID = "bench-random-unit-384"
NAMES = ("head", "base")
LAST = 10_000  # the window the issue quotes: the last 10k of the store's growth


class Worker(RevisionProcess):
    """A process upserting into its own store with the ``neural_memory`` found first on ``layer``."""

    def __init__(self, name: str, layer: Path, folder: Path, args: argparse.Namespace, now: str) -> None:
        profile = str(Path(args.profile).resolve() / f"{name}.prof") if args.profile else ""
        spec = {
            "folder": str(folder),
            "size": args.size,
            "now": now,
            "profile": profile,
            "sync": args.synchronous,
            "sql": args.head_sql if name == "head" else [],
        }
        super().__init__(name, layer, "bench.store_writes", [json.dumps(spec)])

    def run(self, batches: list[tuple[int, int]]) -> tuple[list[float], list[int]]:
        """Seconds of each upsert of ``batches`` (start, stop) of the prepared items, and the bytes
        the worker wrote during each."""
        stdin = self._process.stdin
        assert stdin is not None
        stdin.write(json.dumps(batches) + "\n")
        stdin.flush()
        seconds, written = self._reply()
        return list(seconds), list(written)

    def close(self) -> None:
        """End the worker (it closes its store and writes its profile)."""
        if self._process.stdin:
            self._process.stdin.close()
        self._process.wait(timeout=600)


def _module(*names: str) -> Any:
    """The first of ``names`` this revision has (modules moved between revisions)."""
    for name in names[:-1]:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return importlib.import_module(names[-1])


def _prepared(size: int, now_iso: str) -> tuple[list[Any], dict[int, np.ndarray[Any, Any]]]:
    """The items this revision's ``prepare`` makes of the synthetic observations, and the vector of
    each embedded one by position (set on a batch just before its upsert, untimed: 100k vectors
    as lists of floats would hold ~1 GB per worker)."""
    from neural_memory.clock import from_iso
    from neural_memory.ingest.prepare import prepare

    tiers = _module("neural_memory.domain.tiers", "neural_memory.ingest.tiers")
    from bench.synthetic import observations

    now = from_iso(now_iso)
    policy = tiers.DEFAULT_POLICY
    items = [prepare(o, now=now, policy=policy, ttl_days=7) for o in observations(size, seed=size, now=now)]
    rng = np.random.default_rng(size)
    vectors = {}
    for position, item in enumerate(items):
        if tiers.is_embedded(item.record.tier):  # as build(): one vector, on the first chunk
            vector = rng.standard_normal(DIMENSION).astype(np.float32)
            vectors[position] = vector / np.linalg.norm(vector)
            item.model_id = MODEL_ID
    return items, vectors


def _open_store(folder: Path, synchronous: str | None) -> Any:
    store_class = _module("neural_memory.stores.sqlite.store", "neural_memory.stores.sqlite").SqliteStore
    path = folder / "neural-memory.sqlite3"
    if synchronous is not None and "synchronous" in inspect.signature(store_class).parameters:
        return store_class(path, synchronous)
    return store_class(path)  # the revision's default (one without the choice always wrote with normal)


def _bytes_written() -> int:
    """Bytes this process has passed to write calls (Linux; 0 elsewhere): unlike time, the same
    on a busy machine as on an idle one."""
    try:
        lines = Path("/proc/self/io").read_text().splitlines()
    except OSError:
        return 0
    return next(int(line.split()[1]) for line in lines if line.startswith("wchar:"))


def worker(spec: dict[str, Any]) -> None:
    """The worker's loop: prepare the items, then time the batches the driver asks for."""
    from bench.log_sink import discard_log_output

    discard_log_output()
    out: IO[str] = sys.stdout
    items, vectors = _prepared(int(spec["size"]), str(spec["now"]))
    store = _open_store(Path(spec["folder"]), spec["sync"])
    for statement in spec["sql"]:
        store._conn.execute(statement)
    profiler = cProfile.Profile() if spec["profile"] else None
    import neural_memory

    out.write(RESULT + json.dumps(neural_memory.__file__) + "\n")  # which tree it runs
    out.flush()
    # The store's write was called ``upsert`` before the port's renames (issue 36): a base
    # revision from before them has only that name.
    write = getattr(store, "write", None) or store.upsert
    for line in sys.stdin:
        times, written = [], []
        for start, stop in json.loads(line):
            batch = items[start:stop]
            for position in range(start, stop):
                if position in vectors:
                    items[position].chunks[0].vector = vectors[position].tolist()
            if profiler is not None:
                profiler.enable()
            before = _bytes_written()
            began = time.perf_counter()
            write("bench", batch)
            times.append(time.perf_counter() - began)
            written.append(_bytes_written() - before)
            if profiler is not None:
                profiler.disable()
            for item in batch:
                item.chunks[0].vector = None
        out.write(RESULT + json.dumps([times, written]) + "\n")
        out.flush()
    store.close()
    if profiler is not None:
        profiler.dump_stats(spec["profile"])


def _rates(batches: list[tuple[int, int]], seconds: list[float]) -> tuple[float, float, float]:
    """Observations/s overall, over the last ``LAST`` and the median per-batch rate of those."""
    counts = np.array([stop - start for start, stop in batches], dtype=np.float64)
    times = np.array(seconds)
    last = np.array([stop > batches[-1][1] - LAST for _, stop in batches])
    return (
        float(counts.sum() / times.sum()),
        float(counts[last].sum() / times[last].sum()),
        float(np.median(counts[last] / times[last])),
    )


def compare(args: argparse.Namespace, head_layer: Path, base_layer: Path, root: Path) -> str:
    """Interleaved rounds of both workers, each filling its own store; the printed line."""
    from tqdm import tqdm

    now = datetime.now(UTC).isoformat()
    batches = [(start, min(args.size, start + args.batch)) for start in range(0, args.size, args.batch)]
    workers = {
        "head": Worker("head", head_layer, root / "head", args, now),
        "base": Worker("base", base_layer, root / "base", args, now),
    }
    seconds: dict[str, list[float]] = {"head": [], "base": []}
    written: dict[str, list[int]] = {"head": [], "base": []}
    try:
        rounds = range(0, len(batches), args.round)
        for index, first in enumerate(tqdm(rounds, desc=f"{args.size} rounds", file=sys.stderr)):
            order = ("head", "base") if index % 2 == 0 else ("base", "head")
            for name in order:
                times, wrote = workers[name].run(batches[first : first + args.round])
                seconds[name].extend(times)
                written[name].extend(wrote)
    finally:
        for each in workers.values():
            each.close()
    (h_all, h_last, h_med), (b_all, b_last, b_med) = (_rates(batches, seconds[n]) for n in NAMES)
    late = [stop > args.size - LAST for _, stop in batches]
    observed = sum(stop - start for (start, stop), is_late in zip(batches, late, strict=True) if is_late)
    h_kb, b_kb = (sum(w for w, is_late in zip(written[n], late, strict=True) if is_late) / observed for n in NAMES)
    return (
        f"{args.size:>7} observations in batches of {args.batch}, {len(rounds)} interleaved rounds, "
        f"synchronous={args.synchronous or 'default'}: head {h_all:,.0f} obs/s overall, {h_last:,.0f} obs/s last 10k "
        f"(median batch {h_med:,.0f}); base {b_all:,.0f} obs/s overall, {b_last:,.0f} obs/s last 10k "
        f"(median batch {b_med:,.0f}); head/base overall {h_all / b_all:.3f}, last 10k {h_last / b_last:.3f}, "
        f"median batch {h_med / b_med:.3f}; written per observation of the last 10k: "
        f"head {h_kb / 1024:.1f} KiB, base {b_kb / 1024:.1f} KiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="the revision to compare with (a commit, tag or branch)")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1000, help="observations per upsert (build()'s)")
    parser.add_argument("--head", help="a revision to measure instead of this tree's layer")
    # One batch per side per round: coarser rounds let one side catch a burst of load alone.
    parser.add_argument("--round", type=int, default=1, help="batches per side per round")
    parser.add_argument(
        "--head-sql", action="append", default=[], help="SQL run on head's write connection first (an ablation)"
    )
    parser.add_argument("--profile", help="a folder for head.prof and base.prof (cProfile of the upserts)")
    parser.add_argument(
        "--synchronous", choices=["normal", "full"], help="for stores that take it (default: each revision's default)"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    if not args.base:
        parser.error("--base is required")
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        base_layer = export_layer(args.base, Path(tmp) / "base-layer")
        head_layer = export_layer(args.head, Path(tmp) / "head-layer") if args.head else ROOT / LAYER
        print(compare(args, head_layer, base_layer, Path(tmp)), flush=True)


if __name__ == "__main__":
    main()
