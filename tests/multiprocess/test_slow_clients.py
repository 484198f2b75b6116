"""Issue 48, item 1: no client can starve the others. The real `neural-memory serve` process, real
sockets: 150 clients each sending a request line and then one header byte every 2 s (before, 110
of them locked everyone out of the local API: waitress's 100 connections, and an idle timeout every
byte restarts), while another client's requests must each be answered within 2 s; the slow ones
are dropped at the head deadline, which the log and GET /health say."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import pytest

from tests.helpers import hash_cli
from tests.helpers.serve import serve
from tests.helpers.slow_clients import SlowClients, timed_get

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration
SLOW = 150
ANSWER_WITHIN_S = 2.0


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def test_150_slow_connections_do_not_keep_other_clients_out_and_are_dropped_at_the_deadline(tmp_path: Path) -> None:
    # Given the local API (a request's head due 10 s after its first byte: the default)
    with serve(tmp_path / "data", samples=False, program=hash_cli.command(16), split_streams=True) as served:
        port, auth = _port(served.url), {"Authorization": f"Bearer {served.key}"}
        # When 150 clients open connections and trickle their headers a byte every 2 s
        slow = SlowClients("127.0.0.1", port, SLOW, every_s=2.0)
        slow.start()
        try:
            time.sleep(3)  # each has sent its request line and a byte
            # Then another client's requests are each answered within 2 s, all along
            answers = []
            for _ in range(8):
                answers.append(timed_get("127.0.0.1", port, "/v1/facets", auth, ANSWER_WITHIN_S))
                time.sleep(0.5)
            assert [status for status, _ in answers] == [200] * 8, answers
            assert max(took for _, took in answers) < ANSWER_WITHIN_S, answers
            # And the slow clients are dropped once their head is 10 s late, none of them kept for ever
            deadline = time.monotonic() + 20
            while slow.dropped < SLOW and time.monotonic() < deadline:
                time.sleep(0.5)
            assert slow.dropped == SLOW and slow.refused == 0, (slow.dropped, slow.refused)
            status, _ = timed_get("127.0.0.1", port, "/v1/facets", auth, ANSWER_WITHIN_S)
            assert status == 200
        finally:
            slow.stop()
        # And GET /health counts them, by reason
        health = json.loads(_get(served.url + "/health"))
        assert health["connections"]["dropped"]["headTimeout"] == SLOW, health
        assert health["connections"]["limit"] >= 1000, health
        served.stop()
    # And the server's log said so (on standard error, with --quiet too)
    assert "slow clients dropped" in served.stderr_text, served.stderr_text[-3000:]


def test_at_the_connection_limit_the_slowest_clients_make_room_for_new_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a server allowing 60 connections and 30 s for a request head (so only the limit acts)
    monkeypatch.setenv("NM_SERVE_MAX_CONNECTIONS", "60")
    monkeypatch.setenv("NM_SERVE_HEAD_TIMEOUT_S", "30")
    with serve(tmp_path / "data", samples=False, program=hash_cli.command(16), split_streams=True) as served:
        port, auth = _port(served.url), {"Authorization": f"Bearer {served.key}"}
        # When 150 slow clients connect: far more than the limit
        slow = SlowClients("127.0.0.1", port, SLOW, every_s=2.0)
        slow.start()
        try:
            time.sleep(3)
            # Then other clients' requests are still answered within 2 s: the slowest clients make room
            answers = [timed_get("127.0.0.1", port, "/v1/facets", auth, ANSWER_WITHIN_S) for _ in range(8)]
            assert [status for status, _ in answers] == [200] * 8, answers
            health = json.loads(_get(served.url + "/health"))
        finally:
            slow.stop()
        # And the ones closed were counted as closed at the limit; the log says so
        assert health["connections"]["dropped"]["atLimit"] >= SLOW - 60, health
        assert health["connections"]["dropped"]["headTimeout"] == 0, health
        served.stop()
    assert "closed at the connection limit" in served.stderr_text, served.stderr_text[-3000:]


def _get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=5) as reply:  # loopback only
        return str(reply.read().decode())


def _mcp_initialize(port: int) -> tuple[int, float]:
    """An agent's first MCP request over HTTP: its status (0: no answer within 2 s) and time."""
    import http.client

    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
    body["params"] = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    began = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=ANSWER_WITHIN_S)
    try:
        connection.request("POST", "/mcp", body=json.dumps(body), headers=headers)
        reply = connection.getresponse()
        reply.read()
        return reply.status, time.monotonic() - began
    except OSError:
        return 0, time.monotonic() - began
    finally:
        connection.close()


def test_the_mcp_server_over_http_outlives_slow_connections_beyond_its_file_descriptors(
    tmp_path: Path,
) -> None:
    import resource
    import subprocess

    from tests.helpers.serve import free_port

    # Given `neural-memory mcp --http` in a process allowed 512 open files (a small ulimit -n)
    port = free_port()
    command = [*hash_cli.command(16), "mcp", "--http", "--port", str(port), "--workspace", "demo"]
    command += ["--data-dir", str(tmp_path / "data")]

    def few_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (512, 512))

    log = tmp_path / "mcp.log"  # a file, not a pipe nobody reads: the log must not block the server
    with log.open("w") as sink:
        process = subprocess.Popen(command, stderr=sink, text=True, preexec_fn=few_files)  # noqa: PLW1509
    slow = SlowClients("127.0.0.1", port, 600, every_s=2.0, request_line=b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
    try:
        deadline = time.monotonic() + 60
        while _mcp_initialize(port)[0] != 200:
            assert process.poll() is None and time.monotonic() < deadline, "mcp --http did not start"
            time.sleep(0.2)
        # When 600 clients trickle their headers a byte every 2 s: more than it has descriptors
        slow.start()
        # Then an agent's requests are answered within 2 s, all along, and the slow ones are closed
        answers = []
        for _ in range(12):
            time.sleep(1)
            answers.append(_mcp_initialize(port))
        assert [status for status, _ in answers] == [200] * 12, answers
        assert max(took for _, took in answers) < ANSWER_WITHIN_S, answers
        # (those it kept are closed once their head is 10 s late)
        deadline = time.monotonic() + 20
        while slow.dropped < 600 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert slow.dropped == 600 and process.poll() is None, slow.dropped
        assert _mcp_initialize(port)[0] == 200
    finally:
        slow.stop()
        process.terminate()
        process.wait(timeout=30)
    # And its log said it dropped them
    errors = log.read_text()
    assert "slow clients dropped" in errors, errors[-3000:]
