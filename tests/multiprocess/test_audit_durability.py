"""The audit trail keeps every acknowledged entry through a kill -9: a real ``neural-memory serve``
(the hashing embedder) takes writes from a named key, is killed with SIGKILL while they go on, and
the trail read afterwards by ``neural-memory audit`` holds an entry for every write the server
acknowledged, with the key's name."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.helpers import hash_cli
from tests.helpers.serve import serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*hash_cli.command(64), *args], capture_output=True, text=True, timeout=120, check=False)


def test_a_killed_server_loses_no_acknowledged_audit_entry(tmp_path: Path) -> None:
    # Given a data folder with a write key named alice, and the server on it
    data = str(tmp_path)
    created = _cli("keys", "create", "--workspace", "acme", "--name", "alice", "--data-dir", data)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]
    acknowledged: list[str] = []
    stop = threading.Event()
    with serve(tmp_path, samples=False, program=hash_cli.command(64)) as served:

        def write() -> None:
            n = 0
            with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=30) as client:
                while not stop.is_set():
                    note = {"id": f"n-{n}", "source": "manual", "observationType": "note",
                            "occurredAt": "2026-12-01T09:00:00Z", "content": f"Note number {n}."}  # fmt: skip
                    try:
                        reply = client.post(f"{served.url}/v1/observations", json={"observations": [note]})
                    except httpx.HTTPError:
                        return  # the server is gone: this one was never acknowledged
                    if reply.status_code == 200:
                        acknowledged.append(f"n-{n}")
                    n += 1

        writer = threading.Thread(target=write)
        writer.start()
        # When it is killed with SIGKILL while the writes go on
        deadline = time.monotonic() + 60
        while len(acknowledged) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        served.process.send_signal(signal.SIGKILL)
        served.process.wait(timeout=30)
        stop.set()
        writer.join(timeout=60)
    assert served.process.returncode == -9 and len(acknowledged) >= 20
    # Then the trail, read after, has a write entry by alice for every acknowledged write
    listed = _cli("audit", "--workspace", "acme", "--action", "write", "--limit", "500", "--json", "--data-dir", data)
    assert listed.returncode == 0, listed.stderr
    entries = [json.loads(line) for line in listed.stdout.splitlines()]
    written = {i for e in entries for i in e["ids"]}
    assert {e["key"] for e in entries} == {"alice"}
    assert set(acknowledged) <= written, sorted(set(acknowledged) - written)
