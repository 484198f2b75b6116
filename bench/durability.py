"""What durability costs: ingest throughput of the embedded store with ``synchronous`` FULL (the
WAL is synced to disk at every commit: an acknowledged write survives power loss) against NORMAL
(synced only at checkpoints: it survives a killed process, not an OS crash or power loss).

    python -m bench.durability [--count 3000] [--rounds 3]

Two workloads, each alternating the two settings round by round on fresh stores (so drift of a
busy machine hits both alike), printing the median over rounds and the ratio FULL / NORMAL:
- ``ingest``: short observations in batches of 64 through ``Service.index`` with the default local
  model, as ``neural-memory ingest`` and the API's bulk writes run (one commit per batch);
- ``one at a time``: single-observation writes (an agent's ``remember``, a webhook), one commit
  each, with the hashing test embedder so the fsync is not hidden behind the model.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

from neural_memory.clock import utcnow
from neural_memory.runtime import build_service
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore
from tqdm import tqdm

from bench.synthetic import observations
from tests.helpers.fakes import HashEmbedder

if TYPE_CHECKING:
    from neural_memory.models import ObservationIn

Mode = Literal["normal", "full"]


def _ingest(items: list[ObservationIn], synchronous: Mode, batch: int, bar: tqdm) -> float:
    """Observations per second through the default service (local model) in batches."""
    with tempfile.TemporaryDirectory() as tmp:
        service = build_service(Settings(data_dir=Path(tmp), sqlite_synchronous=synchronous))
        assert service.embedder is not None
        service.embedder.embed(["warm up"], "search_document")
        began = time.perf_counter()
        for start in range(0, len(items), batch):
            service.index("bench", items[start : start + batch])
            bar.update(len(items[start : start + batch]))
        seconds = time.perf_counter() - began
        assert isinstance(service.store, SqliteStore)
        service.store.close()
    return len(items) / seconds


def _one_at_a_time(items: list[ObservationIn], synchronous: Mode, bar: tqdm) -> float:
    """Single-observation writes per second (one commit each), the model out of the way."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), sqlite_synchronous=synchronous)
        store = SqliteStore(settings.sqlite_path, synchronous)
        service = Service(store, HashEmbedder(), settings)
        began = time.perf_counter()
        for item in items:
            service.index("bench", [item])
            bar.update(1)
        seconds = time.perf_counter() - began
        store.close()
    return len(items) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=3000, help="observations per round of the ingest workload")
    parser.add_argument("--single", type=int, default=500, help="single writes per round")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    now = utcnow()
    items = [
        o.model_copy(update={"tier": "A", "content": " ".join(o.content.split()[: 8 + i % 8]) + f" (#{i})"})
        for i, o in enumerate(observations(args.count, seed=11, now=now))
    ]
    rates: dict[tuple[str, Mode], list[float]] = {}
    total = args.rounds * 2 * (args.count + args.single)
    with tqdm(total=total, unit="obs", desc="durability", file=sys.stderr) as bar:
        for _ in range(args.rounds):
            for mode in ("normal", "full"):
                rates.setdefault(("ingest", mode), []).append(_ingest(items, mode, args.batch, bar))
                single = items[: args.single]
                rates.setdefault(("one at a time", mode), []).append(_one_at_a_time(single, mode, bar))
    for workload in ("ingest", "one at a time"):
        normal = statistics.median(rates[(workload, "normal")])
        full = statistics.median(rates[(workload, "full")])
        print(
            f"{workload:<14} NORMAL {normal:8.0f} obs/s   FULL {full:8.0f} obs/s   "
            f"FULL/NORMAL {full / normal:.2f}   (median of {args.rounds} rounds)"
        )


if __name__ == "__main__":
    main()
