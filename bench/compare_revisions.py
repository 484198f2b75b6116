"""Search latency of this tree against an earlier revision, on the same store, interleaved.

    python -m bench.compare_revisions --base 4569a24 [--sizes 10000 100000] [--searches 400] [--rounds N]

``bench.search_latency`` run twice, one revision after the other, mixes the revisions' difference
with whatever else the machine did meanwhile (a p95 moves by 2 ms between two runs of the same
code on a busy 2-core box). Here one store per size is built once (as ``bench.search_latency``
builds it), then two worker processes search it: one imports this tree's ``neural_memory``, the
other the base revision's (``git archive`` of its layer into a temporary folder). The driver
alternates them in short rounds over the same search bodies, flipping which goes first each round,
so a burst of load lands on both. It prints each side's p50 and p95 and the ratios head / base.

The log handler of each worker writes to ``os.devnull``: formatting a log line is part of a
search's cost, where the bytes go is not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import IO, Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LAYER = "layers/core/python"
RESULT = "RESULT "  # the prefix of a worker's reply line: any other line on its stdout is ignored


def export_layer(revision: str, into: Path) -> Path:
    """The layer of ``revision`` extracted under ``into``; its import root."""
    archive = subprocess.run(["git", "archive", revision, LAYER], cwd=ROOT, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / LAYER


class RevisionProcess:
    """A worker process with the ``neural_memory`` found first on ``layer``, running ``module``'s
    ``--worker ARGS``; it answers on lines starting with ``RESULT`` (its first: the file it imported
    ``neural_memory`` from, checked to be under ``layer``)."""

    def __init__(self, name: str, layer: Path, module: str, args: list[str]) -> None:
        self.name = name
        env = {**os.environ, "PYTHONPATH": f"{layer}{os.pathsep}{ROOT}", "POWERTOOLS_METRICS_DISABLED": "true"}
        command = [sys.executable, "-m", module, "--worker", *args]
        self._process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        imported = Path(self._reply())
        if not imported.is_relative_to(layer):
            raise RuntimeError(f"worker {name} imported {imported}, not the layer under {layer}")

    def _reply(self) -> Any:
        stdout = self._process.stdout
        assert stdout is not None
        for line in stdout:
            if line.startswith(RESULT):
                return json.loads(line[len(RESULT) :])
        raise RuntimeError(f"worker {self.name} exited with {self._process.wait()}")


class Worker(RevisionProcess):
    """A process searching the store with the ``neural_memory`` found first on ``layer``."""

    def __init__(self, name: str, layer: Path, data_dir: Path, size: int, searches: int) -> None:
        super().__init__(name, layer, "bench.compare_revisions", [str(data_dir), str(size), str(searches)])

    def run(self, start: int, stop: int) -> list[float]:
        """Milliseconds of searches ``start:stop`` of the shared bodies."""
        stdin = self._process.stdin
        assert stdin is not None
        stdin.write(f"{start} {stop}\n")
        stdin.flush()
        return list(self._reply())

    def close(self) -> None:
        """End the worker (it closes its store as ``serve`` does)."""
        if self._process.stdin:
            self._process.stdin.close()
        self._process.wait(timeout=120)


def worker(data_dir: Path, size: int, searches: int) -> None:
    """The worker's loop: open the store, warm up, then time the searches the driver asks for."""
    from neural_memory.clock import from_iso
    from neural_memory.models import SearchRequest
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
    from neural_memory.service import Service
    from neural_memory.settings import Settings
    from neural_memory.stores.sqlite.store import SqliteStore

    from bench.log_sink import discard_log_output
    from bench.synthetic import search_bodies

    discard_log_output()
    out: IO[str] = sys.stdout
    meta = json.loads((data_dir / "bench.json").read_text())
    now = from_iso(meta["now"])
    embedder = OnnxLocalEmbedder()
    embedder.load()
    settings = Settings(data_dir=data_dir)
    service = Service(SqliteStore(settings.sqlite_path), embedder, settings, clock=lambda: now)
    bodies = [SearchRequest.model_validate(b) for b in search_bodies(searches + 20, seed=7, now=now)]
    for body in bodies[:20]:  # the first loads the mirror; the others warm up
        service.search("bench", body, "bench")
    timed = bodies[20:]
    import neural_memory

    out.write(RESULT + json.dumps(neural_memory.__file__) + "\n")  # which tree it runs
    out.flush()
    for line in sys.stdin:
        start, stop = (int(part) for part in line.split())
        times = []
        for body in timed[start:stop]:
            began = time.perf_counter()
            service.search("bench", body, "bench")
            times.append((time.perf_counter() - began) * 1000)
        out.write(RESULT + json.dumps(times) + "\n")
        out.flush()
    service.store.close()  # type: ignore[attr-defined]


def build_store(size: int, root: Path) -> Path:
    """A store of ``size`` synthetic observations built by this tree, as ``bench.search_latency`` builds it."""
    from neural_memory.clock import to_iso, utcnow
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

    from bench.search_latency import build

    embedder = OnnxLocalEmbedder()
    embedder.load()
    now = utcnow()
    service = build(size, root, embedder, 2000, now)
    service.store.close()  # type: ignore[attr-defined]  # saves the mirror: both workers load the same one
    data_dir = root / f"n{size}"
    (data_dir / "bench.json").write_text(json.dumps({"now": to_iso(now)}))
    return data_dir


def compare(size: int, root: Path, base_layer: Path, searches: int, rounds: int) -> str:
    """Interleaved rounds of both workers over one store; the printed line."""
    data_dir = build_store(size, root)
    head = Worker("head", ROOT / LAYER, data_dir, size, searches)
    base = Worker("base", base_layer, data_dir, size, searches)
    times: dict[str, list[float]] = {"head": [], "base": []}
    step = max(1, searches // rounds)
    try:
        from tqdm import tqdm

        for index, start in enumerate(tqdm(range(0, searches, step), desc=f"{size} rounds", file=sys.stderr)):
            pair = (head, base) if index % 2 == 0 else (base, head)
            for side in pair:
                times[side.name].extend(side.run(start, min(searches, start + step)))
    finally:
        head.close()
        base.close()
    stats = {name: (float(np.percentile(t, 50)), float(np.percentile(t, 95))) for name, t in times.items()}
    (hp50, hp95), (bp50, bp95) = stats["head"], stats["base"]
    return (
        f"{size:>7} observations, {searches} searches each, {rounds} interleaved rounds: "
        f"head p50 {hp50:.1f} ms, p95 {hp95:.1f} ms; base p50 {bp50:.1f} ms, p95 {bp95:.1f} ms; "
        f"head/base p50 {hp50 / bp50:.3f}, p95 {hp95 / bp95:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="the revision to compare with (a commit, tag or branch)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--searches", type=int, default=400)
    # One search per side per round: coarser rounds let one side catch a burst of load alone.
    parser.add_argument("--rounds", type=int, default=0, help="rounds (default: one per search)")
    parser.add_argument("--worker", nargs=3, metavar=("DATA_DIR", "SIZE", "SEARCHES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(Path(args.worker[0]), int(args.worker[1]), int(args.worker[2]))
        return
    if not args.base:
        parser.error("--base is required")
    with tempfile.TemporaryDirectory() as tmp:
        base_layer = export_layer(args.base, Path(tmp) / "base")
        for size in args.sizes:
            print(compare(size, Path(tmp), base_layer, args.searches, args.rounds or args.searches), flush=True)


if __name__ == "__main__":
    main()
