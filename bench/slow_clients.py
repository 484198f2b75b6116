"""A client's requests while many slow clients hold connections to ``neural-memory serve`` (issue 48).

    python -m bench.slow_clients [--slow 150] [--requests 20] [--every 2]

Starts ``neural-memory serve`` (the local model, as ``make serve``) on a new data folder with the
samples, then measures one well-behaved client's searches (a new connection each, as a script's
``curl`` makes them): first alone, then while ``--slow`` clients each send a request line and one
header byte every ``--every`` seconds (before issue 48, 110 such clients locked everyone out).
It prints the searches' p50/p95 and slowest in both phases, how many were answered within 2 s,
and how long the server took to drop every slow client (the request-head deadline, 10 s).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import tempfile
import time
from pathlib import Path

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

import numpy as np

from bench.concurrency import _free_port
from bench.noisy_tenants import CLI
from tests.helpers.slow_clients import SlowClients

ANSWER_WITHIN_S = 2.0


def _search(port: int, key: str) -> tuple[int, float]:
    import http.client

    began = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=ANSWER_WITHIN_S * 5)
    try:
        body = json.dumps({"query": "why did the deploy fail", "topK": 5})
        connection.request("POST", "/v1/search", body, {"Authorization": f"Bearer {key}"})
        reply = connection.getresponse()
        reply.read()
        return int(reply.status), (time.monotonic() - began) * 1000
    except OSError:
        return 0, (time.monotonic() - began) * 1000
    finally:
        connection.close()


def _phase(port: int, key: str, requests: int) -> list[tuple[int, float]]:
    answers = []
    for _ in range(requests):
        answers.append(_search(port, key))
        time.sleep(0.25)
    return answers


def _report(name: str, answers: list[tuple[int, float]]) -> None:
    took = [ms for _, ms in answers]
    within = sum(1 for status, ms in answers if status == 200 and ms < ANSWER_WITHIN_S * 1000)
    print(
        f"  {name:<28} p50 {np.percentile(took, 50):7.1f} ms  p95 {np.percentile(took, 95):7.1f} ms  "
        f"slowest {max(took):7.1f} ms  answered within 2 s: {within}/{len(answers)}"
    )


def main() -> None:
    import subprocess

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slow", type=int, default=150, help="slow clients")
    parser.add_argument("--requests", type=int, default=20, help="searches per phase")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between a slow client's bytes")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="nm-slow-") as tmp:
        data_dir, port = Path(tmp) / "data", _free_port()
        command = [*CLI, "serve", "--data-dir", str(data_dir), "--port", str(port), "--quiet"]
        with (Path(tmp) / "serve.log").open("w") as log:
            server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        try:
            deadline = time.monotonic() + 180
            while not (data_dir / "demo-api-key").exists() or _search(port, "-")[0] != 401:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"serve did not start:\n{(Path(tmp) / 'serve.log').read_text()[-3000:]}")
                time.sleep(0.5)
            key = (data_dir / "demo-api-key").read_text().strip()
            _phase(port, key, 3)  # warm: the first search builds the index
            alone = _phase(port, key, args.requests)
            slow = SlowClients("127.0.0.1", port, args.slow, every_s=args.every)
            began = time.monotonic()
            slow.start()
            try:
                beside = _phase(port, key, args.requests)
                while slow.dropped < args.slow and time.monotonic() - began < 120:
                    time.sleep(0.5)
                dropped_after = time.monotonic() - began
            finally:
                slow.stop()
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=120)
    print(f"one client's searches over new connections, alone and beside {args.slow} slow clients:")
    _report("alone", alone)
    _report(f"beside {args.slow} slow clients", beside)
    print(
        f"  slow clients dropped by the server: {slow.dropped}/{args.slow} ({slow.refused} refused at connect), "
        f"all within {dropped_after:.1f} s of the first"
    )


if __name__ == "__main__":
    main()
