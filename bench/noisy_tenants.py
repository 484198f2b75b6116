"""A quiet workspace's writes and searches while bulk clients load the server, against the same
on an idle server, in one run (issue 58; issue 48 measured writes only).

    python -m bench.noisy_tenants [--runs 3] [--rounds 2] [--seconds 15] [--batch 100]
    python -m bench.noisy_tenants --same-workspace [--batch 50]
    python -m bench.noisy_tenants --import-git PATH
    python -m bench.noisy_tenants --base REV   # and REV's server, run by run, alternating

Starts ``neural-memory serve`` (the local model, as ``make serve``) on a new data folder per run.

- Default (the issue's shape): the quiet workspace's client writes one observation and runs one
  hybrid search every 0.2 s; idle first, then while two clients of another workspace post
  ``--batch``-observation batches back to back, the phases alternating ``--rounds`` times. Every
  bulk observation is new text (a unique sentence in each), so the embedding cache cannot hide
  the load.
- ``--same-workspace``: four clients of one workspace search every 0.2 s, idle and while two
  clients of the same workspace post ``--batch``-observation batches.
- ``--import-git PATH``: the noise is ``neural-memory import git PATH`` into another workspace,
  from its own process on the same data folder, instead of the bulk clients.

Each run prints the quiet side's p50/p95 idle and busy and their ratios, and the bulk
throughput (observations acknowledged a second while busy); with ``--runs`` > 1, the median of
the runs' ratios. Phases alternate in one run, so a machine busy with other work weighs on both.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

import numpy as np
from neural_memory.clock import utcnow

from bench.concurrency import _free_port
from bench.synthetic import QUERIES, WORDS, observations

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "neural_memory.local.cli"]
PAUSE_S = 0.2  # the quiet client's rhythm: an agent's hook, not a loop


class Client:
    """One keep-alive connection of one workspace."""

    def __init__(self, port: int, key: str) -> None:
        self._port = port
        self._headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self._conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)

    def post(self, path: str, body: object) -> int:
        """The reply's status (0: no reply). A keep-alive connection the server closed while it
        sat idle (the bulk clients' phase alone) is opened again once, as an SDK does."""
        for attempt in range(2):
            try:
                self._conn.request("POST", path, json.dumps(body), self._headers)
                response = self._conn.getresponse()
                response.read()
                return int(response.status)
            except (OSError, http.client.HTTPException):
                self._conn.close()
                self._conn = http.client.HTTPConnection("127.0.0.1", self._port, timeout=300)
                if attempt:
                    return 0
        return 0


def start_serve(data_dir: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """``neural-memory serve`` on ``data_dir``, its log in ``log`` (a pipe nobody read would fill)."""
    command = [*CLI, "serve", "--data-dir", str(data_dir), "--port", str(port), "--no-samples", "--quiet"]
    with log.open("w") as sink:
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        probe = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            probe.request("GET", "/health")
            if probe.getresponse().status == 200:
                return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"serve exited:\n{log.read_text()[-3000:]}") from None
            time.sleep(0.3)
        finally:
            probe.close()
    raise SystemExit("serve did not start within 180 s")


def api_key(data_dir: Path, workspace: str) -> str:
    command = [*CLI, "keys", "create", "--workspace", workspace, "--data-dir", str(data_dir)]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]


def payload(name: str, n: int, size: int) -> list[dict[str, Any]]:
    """``size`` observations, each with a sentence no other has (distinct text: no cache hit)."""
    rng = random.Random(f"{name}-{n}")
    batch = observations(size, seed=rng.randrange(1 << 30), now=utcnow())
    return [
        {
            **o.model_dump(mode="json", by_alias=True, exclude_none=True),
            "id": f"{name}-{n}-{i}",
            "content": f"{o.content} {name} {n} {i}: " + " ".join(rng.choice(WORDS) for _ in range(12)),
        }
        for i, o in enumerate(batch)
    ]


@dataclass
class Quiet:
    """What the quiet side measured in one phase (ms)."""

    writes: list[float] = field(default_factory=list)
    searches: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def quiet_loop(client: Client, name: str, seconds: float, write: bool, seed: int, into: Quiet) -> None:
    """Every ``PAUSE_S``: one single-observation write (when ``write``) and one hybrid search."""
    rng = random.Random(seed)
    deadline, n = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        if write:
            began = time.perf_counter()
            status = client.post("/v1/observations", {"observations": payload(name, n, 1)})
            into.writes.append((time.perf_counter() - began) * 1000)
            if status != 200:
                into.errors.append(f"quiet write {status}")
        body = {"query": rng.choice(QUERIES), "topK": 10, "mode": "hybrid", "llmFilter": False}
        began = time.perf_counter()
        status = client.post("/v1/search", body)
        into.searches.append((time.perf_counter() - began) * 1000)
        if status != 200:
            into.errors.append(f"quiet search {status}")
        n += 1
        time.sleep(PAUSE_S)


def nothing_for(seconds: float) -> Quiet:
    """No quiet side: the bulk clients alone for ``seconds``."""
    time.sleep(seconds)
    return Quiet()


@dataclass
class Noise:
    """The bulk side of a busy phase: observations acknowledged, over how long, and errors."""

    added: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


def bulk(client: Client, name: str, size: int, stop: threading.Event, noise: Noise) -> None:
    """``size``-observation batches back to back until ``stop``."""
    n = 0
    while not stop.is_set():
        status = client.post("/v1/observations", {"observations": payload(name, n, size)})
        if status == 200:
            noise.added.append(size)
        else:
            noise.errors.append(f"bulk {status}")
        n += 1


def busy(
    port: int, key: str, data_dir: Path, args: argparse.Namespace, round_no: int, quiet: Callable[[], Quiet]
) -> tuple[Quiet, Noise]:
    """Run ``quiet()`` while the noise runs: two bulk clients, or an ``import git``."""
    stop, noise = threading.Event(), Noise()
    clients = []
    importer = None
    if args.import_git is not None:
        command = [*CLI, "import", "git", str(args.import_git), "--repo", f"bench/history{round_no}"]
        importer = subprocess.Popen(
            [*command, "--workspace", "noisy", "--data-dir", str(data_dir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    else:
        clients = [
            threading.Thread(target=bulk, args=(Client(port, key), f"bulk{round_no}-{i}", args.batch, stop, noise))
            for i in range(2)
        ]
    began = time.monotonic()
    for thread in clients:
        thread.start()
    time.sleep(2)  # the noise under way
    try:
        measured = quiet()
    finally:
        stop.set()
        if importer is not None:
            importer.send_signal(signal.SIGINT)  # resumable: stopped as Ctrl-C stops it
            try:
                importer.wait(timeout=60)
            except subprocess.TimeoutExpired:
                importer.kill()
                importer.wait()
        for thread in clients:
            thread.join(timeout=300)
        noise.seconds = time.monotonic() - began  # every batch counted was posted and answered within it
    return measured, noise


def p(values: list[float], q: int) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


@dataclass
class Run:
    idle: Quiet
    noisy: Quiet
    bulk_obs_s: float
    alone_obs_s: float
    errors: int

    def ratios(self) -> dict[str, float]:
        out = {}
        for kind in ("writes", "searches"):
            idle, noisy = getattr(self.idle, kind), getattr(self.noisy, kind)
            if idle:
                out[f"{kind} p50"] = p(noisy, 50) / p(idle, 50)
                out[f"{kind} p95"] = p(noisy, 95) / p(idle, 95)
        return out


def one_run(args: argparse.Namespace) -> Run:
    with tempfile.TemporaryDirectory(prefix="nm-noisy-") as tmp:
        data_dir, port = Path(tmp) / "data", _free_port()
        server = start_serve(data_dir, port, Path(tmp) / "serve.log")
        errors, failures = 0, []
        try:
            quiet_key = api_key(data_dir, "quiet")
            noisy_key = quiet_key if args.same_workspace else api_key(data_dir, "noisy")
            quiet = Client(port, quiet_key)
            quiet.post("/v1/observations", {"observations": payload("seed", 0, 200)})  # something to find
            searchers = 4 if args.same_workspace else 1
            clients = [quiet] + [Client(port, quiet_key) for _ in range(searchers - 1)]
            warm = Quiet()
            quiet_loop(quiet, "warm", 2, not args.same_workspace, 0, warm)

            def phase(name: str, seed: int) -> Quiet:
                into = Quiet()
                threads = [
                    threading.Thread(
                        target=quiet_loop,
                        args=(c, f"{name}-{k}", args.seconds, not args.same_workspace, seed + k, into),
                    )
                    for k, c in enumerate(clients)
                ]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                return into

            idle, noisy, bulk_obs, bulk_s, alone_obs, alone_s = Quiet(), Quiet(), 0, 0.0, 0, 0.0
            for round_no in range(args.rounds):
                if args.import_git is None:  # the bulk clients alone: their throughput without the quiet side
                    _, solo = busy(port, noisy_key, data_dir, args, 100 + round_no, partial(nothing_for, args.seconds))
                    alone_obs, alone_s = alone_obs + sum(solo.added), alone_s + solo.seconds
                got = phase(f"idle{round_no}", 100 * round_no)
                held, noise = busy(
                    port, noisy_key, data_dir, args, round_no, partial(phase, f"busy{round_no}", 50 + round_no)
                )
                for into, part in ((idle, got), (noisy, held)):
                    into.writes += part.writes
                    into.searches += part.searches
                    errors += len(part.errors)
                    failures += part.errors
                bulk_obs += sum(noise.added)
                bulk_s += noise.seconds
                errors += len(noise.errors)
                failures += noise.errors
                if noise.errors:
                    print(f"  bulk errors: {noise.errors[:3]}", flush=True)
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=120)
            if errors:
                print(f"  errors: {failures[:5]}")
                log = [line[:400] for line in (Path(tmp) / "serve.log").read_text().splitlines() if "rror" in line]
                print("  the server's log, last error lines:", *log[-5:], sep="\n    ")
    return Run(idle, noisy, bulk_obs / bulk_s if bulk_s else 0.0, alone_obs / alone_s if alone_s else 0.0, errors)


def report(run: Run) -> None:
    for kind in ("writes", "searches"):
        idle, noisy = getattr(run.idle, kind), getattr(run.noisy, kind)
        if not idle:
            continue
        print(
            f"  {kind:<8} idle p50 {p(idle, 50):6.1f} p95 {p(idle, 95):6.1f} ms | busy p50 {p(noisy, 50):6.1f} "
            f"p95 {p(noisy, 95):6.1f} ms | ratio p50 x{p(noisy, 50) / p(idle, 50):.2f} "
            f"p95 x{p(noisy, 95) / p(idle, 95):.2f}  ({len(idle)} / {len(noisy)} samples)",
            flush=True,
        )
    print(
        f"  bulk {run.bulk_obs_s:.1f} observations/s beside the quiet side, {run.alone_obs_s:.1f} alone; "
        f"errors {run.errors}",
        flush=True,
    )


def export(revision: str, into: Path) -> Path:
    """``revision``'s layer and function handlers (``git archive``) under ``into``; the layer's path."""
    archive = subprocess.run(
        ["git", "archive", revision, "layers/core/python", "functions"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "layers/core/python"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs, each on a new server (the median is printed)")
    parser.add_argument("--rounds", type=int, default=2, help="idle and busy phases, alternated, per run")
    parser.add_argument("--seconds", type=float, default=15, help="seconds of each phase")
    parser.add_argument("--batch", type=int, default=100, help="observations per bulk request")
    parser.add_argument("--same-workspace", action="store_true", help="four searchers and the bulk in one workspace")
    parser.add_argument("--import-git", type=Path, default=None, help="the noise is `import git` of this clone")
    parser.add_argument("--base", help="also run this revision's server, alternating with this tree's, run by run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nm-noisy-base-") as tmp:
        sides: list[tuple[str, Path | None]] = [("head", None)]
        if args.base:
            sides.append((f"base {args.base}", export(args.base, Path(tmp))))
        runs: dict[str, list[Run]] = {name: [] for name, _ in sides}
        for n in range(args.runs):
            for name, layer in sides if n % 2 == 0 else sides[::-1]:  # who goes first alternates
                os.environ.pop("PYTHONPATH", None)
                if layer is not None:  # the server and the CLI import the base's package first
                    os.environ["PYTHONPATH"] = f"{layer}{os.pathsep}{ROOT}"
                print(f"run {n + 1} ({name}):", flush=True)
                runs[name].append(one_run(args))
                report(runs[name][-1])
    for name, done in runs.items():
        if len(done) > 1:
            keys = done[0].ratios().keys()
            medians = {k: statistics.median(r.ratios()[k] for r in done) for k in keys}
            print(
                f"{name}, median of {len(done)} runs: " + ", ".join(f"{k} x{v:.2f}" for k, v in medians.items()), end=""
            )
            print(
                f"; bulk {statistics.median(r.bulk_obs_s for r in done):.1f} observations/s beside the quiet side, "
                f"{statistics.median(r.alone_obs_s for r in done):.1f} alone"
            )


if __name__ == "__main__":
    main()
