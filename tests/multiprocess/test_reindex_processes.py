"""The embedded store's reindex at the process boundary (issue 24): ``serve`` configured with model
A answers vector searches and takes writes while ``neural-memory reindex --data-dir D`` (another
process, configured with model B) rebuilds the store; the reindex is killed with SIGKILL mid-way
and resumed; a ``serve`` with B is refused before it, naming the command, and finds every
observation after it. Two hashing test models stand in for A and B (``tests/helpers/hash_cli``)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.hash_cli import command
from tests.helpers.processes import DATABASE, broken, call, notes
from tests.helpers.serve import free_port, serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

MODEL_A, MODEL_B = command(64), command(32)
SLOW_B = command(32, 0.15)  # each batch of the reindex takes 0.15 s at least


def _pending(data: Path) -> int:
    """New vectors written aside so far (read through SQLite, read only, beside the processes)."""
    with sqlite3.connect(f"file:{data / DATABASE}?mode=ro", uri=True, timeout=30) as conn:
        return int(conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0])


def _semantic(url: str, key: str, note: dict[str, Any]) -> tuple[int, Any]:
    body = {"query": f"{note['title']}\n{note['content']}", "topK": 3, "mode": "semantic", "llmFilter": False}
    return call(url, key, "POST", "/v1/search", body)


def _run(program: list[str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*program, *args], capture_output=True, text=True, timeout=timeout, check=False)


def test_serve_with_model_a_answers_while_a_killed_and_resumed_reindex_rebuilds_for_model_b(tmp_path: Path) -> None:
    data = tmp_path / "data"
    written = notes("reindexword", 40)
    late = notes("lateword", 3)
    with serve(data, samples=False, program=MODEL_A) as served:
        # Given a store built by model A through a running server
        status, reply = call(served.url, served.key, "POST", "/v1/observations", {"observations": written})
        assert status == 200, reply
        # When a server configured with B starts on it, Then it is refused, naming the command
        refused = _run(MODEL_B, "serve", "--no-samples", "--port", str(free_port()), "--data-dir", str(data))
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert f"neural-memory reindex --data-dir {data}" in refused.stderr and not broken(refused.stderr)
        # When `neural-memory reindex` for B runs beside the server and is killed mid-way
        reindex = subprocess.Popen(
            [*SLOW_B, "reindex", "--batch", "4", "--data-dir", str(data)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        searched = 0
        try:
            deadline = time.monotonic() + 120
            while _pending(data) < 12 and time.monotonic() < deadline and reindex.poll() is None:
                # Then the server answers vector searches with A's vectors meanwhile
                probe = written[searched % len(written)]
                status, reply = _semantic(served.url, served.key, probe)
                assert status == 200 and probe["id"] in [r["id"] for r in reply["results"]], reply
                searched += 1
                if searched == 3:  # and takes a write, embedded by A
                    status, reply = call(served.url, served.key, "POST", "/v1/observations", {"observations": late})
                    assert status == 200, reply
            assert reindex.poll() is None, reindex.communicate()[0]
            reindex.send_signal(signal.SIGKILL)
            reindex.wait(timeout=30)
        finally:
            if reindex.poll() is None:
                reindex.kill()
        kept = _pending(data)
        assert kept >= 12 and searched >= 3
        status, reply = _semantic(served.url, served.key, written[0])  # still A's store
        assert status == 200 and reply["results"], reply
        # When it runs again, Then it resumes (the batches done are kept) and swaps
        resumed = _run(MODEL_B, "reindex", "--batch", "4", "--data-dir", str(data))
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "swapped in" in resumed.stdout and f"{kept} done by an earlier run" in resumed.stdout, resumed.stdout
        assert not broken(resumed.stdout + resumed.stderr)
        # And the server still configured with A is refused vector searches, naming the command
        status, reply = _semantic(served.url, served.key, written[0])
        assert status == 503 and "neural-memory reindex --data-dir" in str(reply), (status, reply)
        # While a keyword search still answers
        keyword = {"query": "reindexword", "topK": 5, "mode": "keyword", "llmFilter": False}
        assert call(served.url, served.key, "POST", "/v1/search", keyword)[0] == 200
    assert not broken(served.output or ""), served.output
    # Then a server configured with B starts, and finds every observation by B's vectors, the
    # ones written during the reindex too
    with serve(data, samples=False, program=MODEL_B) as served_b:
        for note in [*written, *late]:
            status, reply = _semantic(served_b.url, served_b.key, note)
            assert status == 200 and reply["results"][0]["id"] == note["id"], (note["id"], reply)
