"""Issue 34, "the first hour": what a new user sees from the terminal, as real processes — data on
standard output, logs on standard error, nothing printed that a pipe into a JSON parser chokes on."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.helpers.events import EVENTS
from tests.helpers.processes import call, cli
from tests.helpers.serve import serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def test_search_json_is_the_only_thing_on_standard_output(tmp_path: Path) -> None:
    # Given the sample events in a store
    data = str(tmp_path / "data")
    cli("ingest", str(EVENTS), "--data-dir", data, "--failures", str(tmp_path / "failures.jsonl"))
    # When a search's JSON is piped on, as `search deploy --json | python3 -m json.tool` does
    searched = cli("search", "deploy", "--json", "--data-dir", data)
    # Then standard output is one JSON document, and the log line went to standard error
    assert searched.returncode == 0, searched.stderr
    reply = json.loads(searched.stdout)
    assert reply["results"], reply
    assert "search complete" in searched.stderr and "search complete" not in searched.stdout


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
