"""A tenant's single writes while another tenant ingests in bulk, against the same writes on an idle
server, in one run (issue 48).

    python -m bench.noisy_tenants [--writes 40] [--rounds 2] [--batch 100] [--repo PATH]

Starts ``neural-memory serve`` (the local model, as ``make serve``) on a new data folder with two
workspaces: ``noisy`` and ``quiet``. Each round has two phases, idle first:

1. idle: the quiet tenant's client posts ``--writes`` single observations, one after another
   (each embedded by the server), timing each;
2. noisy: the same, while two clients of the noisy tenant post ``--batch``-observation batches
   back to back and ``neural-memory import git`` brings a repository's history (``--repo``, by
   default this one) into the noisy workspace from its own process, on the same data folder.

It prints the quiet tenant's write p50/p95 in each phase (pooled over the rounds), the ratios
noisy/idle, how many observations the noisy tenant got in meanwhile, and the errors (non-2xx
replies). Phases alternate in one run, so a machine busy with other work weighs on both.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

import numpy as np
from neural_memory.clock import utcnow

from bench.concurrency import _free_port
from bench.synthetic import observations

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "neural_memory.local.cli"]


class Client:
    """One keep-alive connection of one tenant."""

    def __init__(self, port: int, key: str) -> None:
        self._port = port
        self._headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self._conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)

    def post(self, path: str, body: object) -> int:
        try:
            self._conn.request("POST", path, json.dumps(body), self._headers)
            response = self._conn.getresponse()
            response.read()
            return int(response.status)
        except (OSError, http.client.HTTPException):
            self._conn.close()
            self._conn = http.client.HTTPConnection("127.0.0.1", self._port, timeout=300)
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


def _payload(name: str, n: int, size: int) -> list[dict[str, Any]]:
    batch = observations(size, seed=hash((name, n)) & 0xFFFF, now=utcnow())
    return [
        {**o.model_dump(mode="json", by_alias=True, exclude_none=True), "id": f"{name}-{n}-{i}"}
        for i, o in enumerate(batch)
    ]


def quiet_writes(client: Client, round_no: int, phase: str, writes: int, errors: list[str]) -> list[float]:
    """The quiet tenant's single writes, one after another: each one's latency in ms."""
    took = []
    for n in range(writes):
        body = {"observations": _payload(f"quiet-{round_no}-{phase}", n, 1)}
        began = time.perf_counter()
        status = client.post("/v1/observations", body)
        took.append((time.perf_counter() - began) * 1000)
        if status != 200:
            errors.append(f"quiet write {status}")
        time.sleep(0.1)  # a person or an agent, not a loop
    return took


def bulk(client: Client, name: str, size: int, stop: threading.Event, added: list[int], errors: list[str]) -> None:
    n = 0
    while not stop.is_set():
        status = client.post("/v1/observations", {"observations": _payload(name, n, size)})
        if status == 200:
            added.append(size)
        else:
            errors.append(f"bulk {status}")
        n += 1


def noisy_phase(
    port: int, noisy_key: str, data_dir: Path, repo: Path, run: Any, size: int
) -> tuple[Any, int, list[str]]:
    """Run ``run()`` while two bulk clients and an import write into the noisy workspace."""
    stop = threading.Event()
    added: list[int] = []
    errors: list[str] = []
    clients = [
        threading.Thread(target=bulk, args=(Client(port, noisy_key), f"bulk{i}", size, stop, added, errors))
        for i in range(2)
    ]
    command = [*CLI, "import", "git", str(repo), "--repo", "bench/history", "--workspace", "noisy"]
    importer = subprocess.Popen(
        [*command, "--data-dir", str(data_dir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for thread in clients:
        thread.start()
    time.sleep(3)  # the bulk clients and the import under way
    try:
        result = run()
    finally:
        stop.set()
        importer.send_signal(signal.SIGINT)  # resumable: stopped as Ctrl-C stops it
        try:
            importer.wait(timeout=60)
        except subprocess.TimeoutExpired:
            importer.kill()
            importer.wait()
        for thread in clients:
            thread.join(timeout=300)
    return result, sum(added), errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=40, help="single writes of the quiet tenant per phase")
    parser.add_argument("--rounds", type=int, default=2, help="idle and noisy phases, alternated")
    parser.add_argument("--batch", type=int, default=100, help="observations per bulk request")
    parser.add_argument("--repo", type=Path, default=ROOT, help="a git clone for `import git` (default: this one)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="nm-noisy-") as tmp:
        data_dir, port = Path(tmp) / "data", _free_port()
        server = start_serve(data_dir, port, Path(tmp) / "serve.log")
        try:
            quiet_key, noisy_key = api_key(data_dir, "quiet"), api_key(data_dir, "noisy")
            quiet = Client(port, quiet_key)
            quiet.post("/v1/observations", {"observations": _payload("warm", 0, 1)})
            idle: list[float] = []
            noisy: list[float] = []
            errors: list[str] = []
            noisy_added = 0
            for round_no in range(args.rounds):
                idle += quiet_writes(quiet, round_no, "idle", args.writes, errors)
                took, added, bulk_errors = noisy_phase(
                    port,
                    noisy_key,
                    data_dir,
                    args.repo,
                    lambda r=round_no: quiet_writes(quiet, r, "noisy", args.writes, errors),
                    args.batch,
                )
                noisy += took
                noisy_added += added
                errors.extend(bulk_errors)
                print(
                    f"round {round_no + 1}: quiet write p95 idle {np.percentile(idle[-args.writes :], 95):.0f} ms, "
                    f"noisy {np.percentile(took, 95):.0f} ms ({added} bulk observations meanwhile)",
                    flush=True,
                )
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=120)
    p50 = (float(np.percentile(idle, 50)), float(np.percentile(noisy, 50)))
    p95 = (float(np.percentile(idle, 95)), float(np.percentile(noisy, 95)))
    print(f"quiet tenant's single writes, {len(idle)} idle and {len(noisy)} beside the noisy tenant:")
    print(f"  idle   p50 {p50[0]:.1f} ms  p95 {p95[0]:.1f} ms")
    print(f"  noisy  p50 {p50[1]:.1f} ms  p95 {p95[1]:.1f} ms  ({noisy_added} bulk observations and an import)")
    print(f"  ratio noisy/idle: p50 x{p50[1] / p50[0]:.2f}, p95 x{p95[1] / p95[0]:.2f}; errors: {len(errors)}")
    if errors:
        print(f"  first errors: {errors[:5]}")


if __name__ == "__main__":
    main()
