"""The README's own flow across processes: `make serve` in one terminal, `neural-memory keys
create` in another on the same data folder, then a request with the new key. A second process
on the folder must never break the running server (issue 22: closing a descriptor of the
database in the server's process released SQLite's POSIX locks, and the next process to close
deleted the WAL under the server)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.serve import serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def _call(url: str, key: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:  # loopback only
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "neural_memory.local.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def test_a_key_created_in_a_second_process_works_and_the_server_keeps_answering(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with serve(data) as served:
        # Given a running server that has answered one authenticated request
        assert _call(served.url, served.key, "/v1/search", {"query": "deploy", "topK": 3})[0] == 200
        # When another process creates a key on the same folder, as the README says to
        created = _cli("keys", "create", "--workspace", "w1", "--data-dir", str(data))
        assert created.returncode == 0, created.stderr
        new_key = created.stdout.strip().splitlines()[-1]
        # Then the new key writes and searches, and the demo key still does: no 5xx at all
        note = {"id": "n1", "source": "manual", "observationType": "note", "occurredAt": "2025-12-12T10:00:00Z"}
        note |= {"title": "Blue-green switches", "content": "Traffic moves only after health checks pass."}
        status, reply = _call(served.url, new_key, "/v1/observations", {"observations": [note]})
        assert status == 200, reply
        status, reply = _call(served.url, new_key, "/v1/search", {"query": "health checks", "topK": 3})
        assert status == 200 and [r["id"] for r in reply["results"]][:1] == ["n1"], reply
        for _ in range(3):  # a later close in another process must not remove the server's WAL either
            assert _cli("keys", "create", "--workspace", "w2", "--data-dir", str(data)).returncode == 0
            status, reply = _call(served.url, served.key, "/v1/search", {"query": "deploy", "topK": 3})
            assert status == 200, reply
            assert (data / "neural-memory.sqlite3-wal").exists() and (data / "neural-memory.sqlite3-shm").exists()
        output = served.stop()
    assert not served.killed, f"serve did not end within 60 s of Ctrl-C:\n{output[-3000:]}"
    assert "Traceback" not in output and "disk I/O error" not in output, output[-3000:]
    # And the last process out closed every connection: its WAL was checkpointed and removed
    left = [p.name for p in data.iterdir() if p.name.endswith("-wal")]
    assert left == [], f"{left} left after serve ended ({served.stop_s:.1f} s after Ctrl-C):\n{output[-3000:]}"
