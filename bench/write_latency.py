"""Write latency of this tree against an earlier revision, interleaved: one request's worth of
observations through ``Service.ingest`` (redaction, preparation, the local model, the SQLite
write with ``synchronous = full``, and, where the tree has one, the audit trail's entry), as
``POST /v1/observations`` runs it.

    python -m bench.write_latency --base 94c0e3f [--writes 300] [--batch 1] [--rounds N]

Two worker processes (``bench.compare_revisions``' ``RevisionProcess``: one imports this tree's
``neural_memory``, the other the base revision's layer), each with a fresh embedded store of its
own in a temporary folder, write the same synthetic observations (unique texts: the embedding
cache cannot help) in alternated short rounds, flipping which goes first each round, so a burst of
load on a busy machine lands on both. Prints each side's p50 and p95 per request and the ratios.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

import numpy as np

from bench.compare_revisions import LAYER, RESULT, ROOT, RevisionProcess, export_layer


class Writer(RevisionProcess):
    """A process writing into a store of its own with the ``neural_memory`` found first on ``layer``."""

    def __init__(self, name: str, layer: Path, data_dir: Path, writes: int, batch: int) -> None:
        super().__init__(name, layer, "bench.write_latency", [str(data_dir), str(writes), str(batch)])

    def run(self, start: int, stop: int) -> list[float]:
        """Milliseconds of requests ``start:stop``."""
        stdin = self._process.stdin
        assert stdin is not None
        stdin.write(f"{start} {stop}\n")
        stdin.flush()
        return list(self._reply())

    def close(self) -> None:
        if self._process.stdin:
            self._process.stdin.close()
        self._process.wait(timeout=120)


def worker(data_dir: Path, writes: int, batch: int) -> None:
    """Open a fresh store, warm up, then time the requests the driver asks for."""
    from neural_memory.clock import utcnow
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
    from neural_memory.service import Service
    from neural_memory.settings import Settings
    from neural_memory.stores.sqlite.store import SqliteStore

    from bench.log_sink import discard_log_output
    from bench.synthetic import observations

    discard_log_output()
    out: IO[str] = sys.stdout
    now = utcnow()
    embedder = OnnxLocalEmbedder()
    embedder.load()
    settings = Settings(data_dir=data_dir)
    service = Service(SqliteStore(settings.sqlite_path), embedder, settings, clock=lambda: now)
    made = observations((writes + 10) * batch, seed=11, now=now)
    requests = [made[n : n + batch] for n in range(0, len(made), batch)]
    for request in requests[:10]:  # the first opens the store and loads the model's session
        service.ingest("bench", request, "warm-up")
    timed = requests[10:]
    import neural_memory

    out.write(RESULT + json.dumps(neural_memory.__file__) + "\n")
    out.flush()
    for line in sys.stdin:
        start, stop = (int(part) for part in line.split())
        times = []
        for request in timed[start:stop]:
            began = time.perf_counter()
            service.ingest("bench", request, "bench")
            times.append((time.perf_counter() - began) * 1000)
        out.write(RESULT + json.dumps(times) + "\n")
        out.flush()
    service.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="the revision to compare with (a commit, tag or branch)")
    parser.add_argument("--writes", type=int, default=300, help="requests per side")
    parser.add_argument("--batch", type=int, default=1, help="observations per request")
    parser.add_argument("--rounds", type=int, default=0, help="rounds (default: one per 5 requests)")
    parser.add_argument("--worker", nargs=3, metavar=("DATA_DIR", "WRITES", "BATCH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(Path(args.worker[0]), int(args.worker[1]), int(args.worker[2]))
        return
    if not args.base:
        parser.error("--base is required")
    with tempfile.TemporaryDirectory() as tmp:
        base_layer = export_layer(args.base, Path(tmp) / "base")
        head = Writer("head", ROOT / LAYER, Path(tmp) / "head-data", args.writes, args.batch)
        base = Writer("base", base_layer, Path(tmp) / "base-data", args.writes, args.batch)
        rounds = args.rounds or max(1, args.writes // 5)
        step = max(1, args.writes // rounds)
        times: dict[str, list[float]] = {"head": [], "base": []}
        try:
            for index, start in enumerate(range(0, args.writes, step)):
                pair = (head, base) if index % 2 == 0 else (base, head)
                for side in pair:
                    times[side.name].extend(side.run(start, min(args.writes, start + step)))
        finally:
            head.close()
            base.close()
    stats = {name: (float(np.percentile(t, 50)), float(np.percentile(t, 95))) for name, t in times.items()}
    (hp50, hp95), (bp50, bp95) = stats["head"], stats["base"]
    print(
        f"{args.writes} requests of {args.batch} observation(s) each, {rounds} interleaved rounds: "
        f"head p50 {hp50:.1f} ms, p95 {hp95:.1f} ms; base p50 {bp50:.1f} ms, p95 {bp95:.1f} ms; "
        f"head/base p50 {hp50 / bp50:.3f}, p95 {hp95 / bp95:.3f}"
    )


if __name__ == "__main__":
    main()
