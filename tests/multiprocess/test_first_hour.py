"""Issue 34, "the first hour": what a new user sees from the terminal, as real processes — data on
standard output, logs in the log file (on standard error with --verbose), nothing printed that a
pipe into a JSON parser chokes on."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from typing import TYPE_CHECKING

import pytest

from tests.helpers.events import EVENTS
from tests.helpers.processes import CLI, call, cli
from tests.helpers.serve import serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def test_search_json_is_the_only_thing_on_standard_output(tmp_path: Path) -> None:
    # Given the sample events in a store
    data = str(tmp_path / "data")
    cli("ingest", str(EVENTS), "--data-dir", data, "--failures", str(tmp_path / "failures.jsonl"))
    # When a search's JSON is piped on, as `search deploy --json | python3 -m json.tool` does
    state = tmp_path / "state"
    command = [*CLI, "search", "deploy", "--json", "--data-dir", data]
    env = {**os.environ, "NM_HOOK_STATE_DIR": str(state)}
    searched = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)
    # Then standard output is one JSON document, and the log line went to the log file, not the terminal
    assert searched.returncode == 0, searched.stderr
    reply = json.loads(searched.stdout)
    assert reply["results"], reply
    assert "search complete" not in searched.stdout + searched.stderr
    assert "search complete" in (state / "neural-memory.log").read_text()
    # And with --verbose the log line is on standard error, never on standard output
    verbose = subprocess.run([*command, "--verbose"], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert json.loads(verbose.stdout)["results"]
    assert "search complete" in verbose.stderr and "search complete" not in verbose.stdout


def test_serve_prints_no_metrics_and_no_log_lines_on_standard_output(tmp_path: Path) -> None:
    # Given a running server (EMF metrics are off in serve, as the README says)
    with serve(tmp_path / "data", split_streams=True) as served:
        # When every function answers once (each a cold start)
        for path, body in (("/v1/search", {"query": "deploy"}), ("/v1/answer", {"question": "Why did it fail?"})):
            assert call(served.url, served.key, "POST", path, body)[0] == 200
        status, _ = call(served.url, served.key, "GET", "/v1/facets")
        assert status == 200
        served.stop()
    # Then no EMF block and no "No application metrics" warning anywhere, and logs are on stderr
    out, err = served.stdout_text, served.stderr_text
    assert '"_aws"' not in out + err and "No application metrics" not in out + err, (out, err)
    assert "search complete" not in out and "search complete" in err, (out, err)


def test_the_samples_load_once_and_a_deleted_one_stays_deleted_until_reloaded(tmp_path: Path) -> None:
    data = tmp_path / "data"
    # Given a first start, which loads the samples into the demo workspace
    with serve(data) as first:
        assert call(first.url, first.key, "GET", "/v1/observations/note-deploy-env-vars")[0] == 200
        # When a user deletes a sample
        assert call(first.url, first.key, "DELETE", "/v1/observations/note-deploy-env-vars")[0] == 200
        assert "20 sample observations loaded" in first.stop()
    # Then the next start leaves it deleted, and says the samples were loaded before
    with serve(data) as second:
        assert call(second.url, second.key, "GET", "/v1/observations/note-deploy-env-vars")[0] == 404
        assert "loaded at an earlier start" in second.stop()
    # And --reload-samples (make demo-reset) brings it back
    with serve(data, extra=["--reload-samples"]) as third:
        assert call(third.url, third.key, "GET", "/v1/observations/note-deploy-env-vars")[0] == 200


def test_a_busy_port_is_a_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    # Given a port something already listens on
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        # When serve is started on it with a new data folder
        started = cli("serve", "--port", str(port), "--data-dir", str(tmp_path / "new"), timeout=120)
    # Then it says so and what to do, without a traceback, and wrote no key (no folder at all)
    assert started.returncode == 1, started.stdout + started.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in started.stderr and "--port" in started.stderr, started.stderr
    assert "Traceback" not in started.stdout + started.stderr
    assert not (tmp_path / "new").exists()


def test_serve_runs_its_first_maintenance_when_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the first maintenance run injected to come at once (the daily schedule otherwise)
    monkeypatch.setenv("NM_MAINTENANCE_FIRST_RUN_S", "0")
    with serve(tmp_path / "data", samples=False) as served:
        # When the server has started, Then its maintenance ran without waiting the default minute
        deadline = time.monotonic() + 120  # a bound on a hang; a loaded box starts serve slowly
        while "daily maintenance" not in "".join(served.lines) and time.monotonic() < deadline:
            time.sleep(0.2)
        output = served.stop()
    assert "daily maintenance" in output, output[-2000:]


def test_the_demo_key_is_printed_once_on_the_start_that_creates_it(tmp_path: Path) -> None:
    from tests.helpers import hash_cli

    data = tmp_path / "data"
    # Given a first start on a new data folder (without the samples: the key is made either way)
    with serve(data, samples=False, program=hash_cli.command(16)) as first:
        key = first.key
        first_output = first.stop()
    # Then that start printed the key in full, once
    assert first_output.count(key) == 1 and "new key" in first_output, first_output
    # When it is started again, with and without the samples
    for samples in (False, True):
        with serve(data, samples=samples, program=hash_cli.command(16)) as later:
            assert later.key == key and call(later.url, later.key, "GET", "/v1/facets")[0] == 200
            output = later.stop()
        # Then the key is not printed again; the start says where it is
        assert key not in output and key[:12] not in output, output
        assert f"demo key: in {data / 'demo-api-key'}" in output, output
