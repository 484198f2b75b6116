"""A noisy neighbour cannot stall another workspace: against a real ``serve`` (the local model),
while one workspace posts large observations as fast as the server lets it, another workspace's
one-observation write is acknowledged within 5 s and its searches keep their p95 within 3× idle,
or a quarter second over it where 3× idle is less (an idle p95 of 10 ms is below a loaded
machine's scheduling pauses; waiting behind the noise's embeddings takes seconds)
(``providers/embeddings/fair_share.py``: workspaces served in turn; ``MAX_EMBEDDED_PASSAGES``).
Bounded: the noisy writers stop after ``NOISE_S`` at most.

Idle is measured before the noise and again after it, and the larger p95 counts: what else the
machine runs meanwhile (a second test suite on the same two cores) moves the idle p95 too, and
one idle sample taken in a quiet minute made a busy one in a loaded minute read as 3.04x."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.processes import broken, cli
from tests.helpers.serve import serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration
NOISE_S = 60  # the most the noisy writers run
SEARCHES = 60  # a p95 of 20 samples is their 19th: one pause of the machine would decide it
WORDS = "deploy rollback cache latency queue shard replica index vector token budget retry".split()


def _call(url: str, key: str, path: str, body: dict[str, Any], timeout: float = 600) -> tuple[int, float]:
    request = urllib.request.Request(  # loopback only
        url + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        reply.read()
        return reply.status, time.monotonic() - started


def _large(n: int) -> dict[str, Any]:
    """Four observations of ~200,000 characters (~800 KB, under the body limit), new each time."""
    text = " ".join(WORDS[(n * 7 + i) % len(WORDS)] + str(i % 997) for i in range(25_000))[:199_000]
    return {
        "observations": [
            {"id": f"big-{n}-{k}", "source": "manual", "observationType": "design_note",
             "occurredAt": "2025-12-12T10:00:00Z", "title": f"big {n} {k}", "content": f"{k} {text}"}
            for k in range(4)
        ]
    }  # fmt: skip


def _p95(seconds: list[float]) -> float:
    ordered = sorted(seconds)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def test_a_noisy_workspace_cannot_stall_another_workspaces_write_or_searches(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with serve(data, samples=False) as server:
        created = cli("keys", "create", "--workspace", "noisy", "--data-dir", str(data))
        noisy = created.stdout.strip().splitlines()[-1]
        quiet = server.key  # the demo workspace's
        note = {"source": "manual", "observationType": "note", "occurredAt": "2025-12-12T10:00:00Z"}
        seed = [
            {**note, "id": f"seed-{n}", "title": f"{w} note {n}", "content": f"about {w}"} for n, w in enumerate(WORDS)
        ]
        assert _call(server.url, quiet, "/v1/observations", {"observations": seed})[0] == 200
        search = {"query": "deploy rollback latency", "topK": 5, "llmFilter": False}
        # Given the quiet workspace's search latency when the server is idle
        _call(server.url, quiet, "/v1/search", search)  # warm
        idle = [_call(server.url, quiet, "/v1/search", search)[1] for _ in range(SEARCHES)]
        # When the noisy workspace posts ~800 KB of observations as fast as it is let, two at a time
        stop = threading.Event()
        posted: list[float] = []

        def flood(worker: int) -> None:
            n = worker
            while not stop.is_set():
                posted.append(_call(server.url, noisy, "/v1/observations", _large(n))[1])
                n += 2

        deadline = time.monotonic() + NOISE_S
        writers = [threading.Thread(target=flood, args=(w,), daemon=True) for w in range(2)]
        for writer in writers:
            writer.start()
        try:
            time.sleep(3)  # the noisy posts are being embedded
            status, write_s = _call(
                server.url, quiet, "/v1/observations", {"observations": [{**note, "title": "small"}]}
            )
            busy = [_call(server.url, quiet, "/v1/search", search)[1] for _ in range(SEARCHES)]
            while not posted and time.monotonic() < deadline:  # the noise was real: a post completed
                time.sleep(0.5)
        finally:
            stop.set()
            for writer in writers:
                writer.join(timeout=max(deadline - time.monotonic(), 1))
        # Then the quiet workspace's one-observation write was acknowledged within 5 s
        assert status == 200 and write_s < 5.0, (write_s, posted)
        # And its searches kept their p95 within 3x idle (idle again once the noise has stopped)
        assert posted, "no noisy post completed"
        for writer in writers:  # the last noisy posts answered: the server is idle again
            writer.join(timeout=120)
        assert not any(writer.is_alive() for writer in writers), "a noisy post is still being served"
        after = [_call(server.url, quiet, "/v1/search", search)[1] for _ in range(SEARCHES)]
        idle_p95 = max(_p95(idle), _p95(after))
        assert _p95(busy) <= max(3 * idle_p95, idle_p95 + 0.25), (sorted(idle), sorted(after), sorted(busy))
        assert not broken(server.stop())
