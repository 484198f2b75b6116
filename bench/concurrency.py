"""Several clients at once over HTTP against a real ``neural-memory serve`` process.

    python -m bench.concurrency [--size 100000] [--searches 100] [--concurrency 8] [--pause 200]

Builds a store of ``--size`` synthetic observations (as ``bench.search_latency`` does), starts
``neural-memory serve`` on it in its own process and measures, from the clients' side:

1. one client searching alone (the baseline, in the same run);
2. eight clients at once: six searching (``--searches`` each) while two keep adding batches of
   ten observations (each batch embedded by the server) back to back.

A searching client is an agent: between two searches it reads the results (``--pause``, the
mean of an exponentially distributed pause; 200 ms, i.e. up to five searches a second per agent,
faster than any agent that calls an LLM between searches). ``--pause 0`` sends searches back to
back, which measures the server's saturation instead: on two cores six such clients wait at
least 3x the single client's time by Little's law, whatever the server does.

It prints search p50/p95 of both, the ratio of the p95s (the target: at most 3x), ingest
throughput during the mixed phase and the number of errors (non-2xx replies or broken
connections; the target: 0).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
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
from tqdm import tqdm

from bench.scale import built_store
from bench.synthetic import observations, search_bodies

SEARCHERS = 6
INGESTERS = 2
BATCH = 10


class Client:
    """One keep-alive HTTP connection, as an agent's SDK would hold."""

    def __init__(self, port: int, key: str) -> None:
        self._port = port
        self._headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self._conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def post(self, path: str, body: object) -> tuple[int, dict[str, Any]]:
        try:
            self._conn.request("POST", path, json.dumps(body), self._headers)
            response = self._conn.getresponse()
            return response.status, json.loads(response.read())
        except (OSError, http.client.HTTPException):
            self._conn.close()
            self._conn = http.client.HTTPConnection("127.0.0.1", self._port, timeout=120)
            return 0, {}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _start_server(data_dir: Path, port: int, concurrency: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "neural_memory.local.cli", "serve", "--data-dir", str(data_dir)]
    command += ["--port", str(port), "--no-samples", "--quiet", "--concurrency", str(concurrency)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"serve exited: {server.stderr.read().decode() if server.stderr else ''}") from None
            time.sleep(0.2)
    raise SystemExit("serve did not start within 120 s")


def _api_key(data_dir: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "neural_memory.local.cli", "keys", "create", "--workspace", "bench"]
        + ["--data-dir", str(data_dir)],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip().splitlines()[-1]


def _searches(
    client: Client,
    bodies: list[dict[str, object]],
    latencies: list[float],
    errors: list[str],
    pause_ms: float = 0.0,
    seed: int = 0,
) -> None:
    pauses = np.random.default_rng(seed).exponential(pause_ms / 1000, len(bodies)) if pause_ms else None
    for at, body in enumerate(bodies):
        if pauses is not None:
            time.sleep(float(pauses[at]))
        began = time.perf_counter()
        status, reply = client.post("/v1/search", body)
        latencies.append((time.perf_counter() - began) * 1000)
        if status != 200 or "results" not in reply:
            errors.append(f"search {status}")


def _ingest(client: Client, name: str, stop: threading.Event, added: list[int], errors: list[str]) -> None:
    now = utcnow()
    batch_no = 0
    while not stop.is_set():
        batch = observations(BATCH, seed=hash((name, batch_no)) & 0xFFFF, now=now)
        payload = [
            {**o.model_dump(mode="json", by_alias=True, exclude_none=True), "id": f"live-{name}-{batch_no}-{i}"}
            for i, o in enumerate(batch)
        ]
        status, _ = client.post("/v1/observations", {"observations": payload})
        if status == 200:
            added.append(len(payload))
        else:
            errors.append(f"ingest {status}")
        batch_no += 1


def _percentiles(values: list[float]) -> tuple[float, float]:
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--searches", type=int, default=100, help="searches per searching client")
    parser.add_argument("--embed-pool", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8, help="serve --concurrency")
    parser.add_argument("--pause", type=float, default=200.0, help="mean pause between one client's searches, ms")
    parser.add_argument("--data-dir", type=Path, help="keep the store here (reused when it exists)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        data_dir = args.data_dir or Path(tmp)
        now = built_store(args.size, data_dir, args.embed_pool)
        key = _api_key(data_dir)
        port = _free_port()
        server = _start_server(data_dir, port, args.concurrency)
        try:
            bodies = search_bodies(SEARCHERS * args.searches + 220, seed=11, now=now)
            alone = Client(port, key)
            warm: list[float] = []
            _searches(alone, bodies[:20], warm, [])
            single: list[float] = []
            single_errors: list[str] = []
            for at, body in enumerate(tqdm(bodies[20:220], desc="one client", unit="q", file=sys.stderr)):
                _searches(alone, [body], single, single_errors, args.pause, seed=at)

            stop = threading.Event()
            latencies: list[float] = []
            added: list[int] = []
            errors: list[str] = []
            rest = bodies[220:]
            searchers = [
                threading.Thread(
                    target=_searches, args=(Client(port, key), rest[i::SEARCHERS], latencies, errors, args.pause, i)
                )
                for i in range(SEARCHERS)
            ]
            ingesters = [
                threading.Thread(target=_ingest, args=(Client(port, key), f"c{i}", stop, added, errors))
                for i in range(INGESTERS)
            ]
            began = time.perf_counter()
            for thread in ingesters + searchers:
                thread.start()
            with tqdm(total=len(rest), desc="8 clients", unit="q", file=sys.stderr) as progress:
                while any(t.is_alive() for t in searchers):
                    time.sleep(0.5)
                    progress.update(len(latencies) - progress.n)
            stop.set()
            for thread in ingesters:
                thread.join()
            took = time.perf_counter() - began
        finally:
            server.terminate()
            server.wait(60)

    s50, s95 = _percentiles(single)
    m50, m95 = _percentiles(latencies)
    pacing = f"a pause of {args.pause:.0f} ms on average between searches" if args.pause else "searches back to back"
    print(f"{args.size} observations, serve --concurrency {args.concurrency}, over HTTP (keep-alive), {pacing}:")
    print(f"  1 client : {len(single)} searches, p50 {s50:.1f} ms, p95 {s95:.1f} ms, errors {len(single_errors)}")
    print(
        f"  8 clients: {len(latencies)} searches by {SEARCHERS} clients, p50 {m50:.1f} ms, p95 {m95:.1f} ms "
        f"(p95 {m95 / s95:.2f}x the single client's); {INGESTERS} clients added {sum(added)} observations "
        f"in {took:.1f} s ({sum(added) / took:.0f}/s); errors {len(errors)}",
        flush=True,
    )


if __name__ == "__main__":
    main()
