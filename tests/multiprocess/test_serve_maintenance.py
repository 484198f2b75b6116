"""``serve`` runs the daily maintenance AWS's schedule runs (purge, archive) on its own: an E
observation older than ``NM_ARCHIVE_EXECUTION_AFTER_DAYS`` leaves search while the server runs,
without a second process, and stays readable and searchable on request."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.clock import to_iso, utcnow

from tests.helpers.hash_cli import command
from tests.helpers.processes import call
from tests.helpers.serve import serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def _push(observation_id: str, days_ago: int) -> dict[str, Any]:
    return {
        "id": observation_id,
        "observationType": "push",
        "source": "github",
        "title": f"Pushed the flaky cache fix ({observation_id})",
        "content": "Retry the cache warmer when the build agent times out",
        "occurredAt": to_iso(utcnow() - timedelta(days=days_ago)),
    }


def _found(url: str, key: str, **extra: Any) -> set[str]:
    body = {"query": "flaky cache fix warmer", "mode": "keyword", "topK": 10, **extra}
    status, reply = call(url, key, "POST", "/v1/search", body)
    assert status == 200, reply
    return {r["id"] for r in reply["results"]}


def test_serve_archives_old_e_observations_on_its_own_schedule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a server whose maintenance runs every ~2 s (the first run after one interval)
    monkeypatch.setenv("NM_MAINTENANCE_INTERVAL_HOURS", str(2 / 3600))
    with serve(tmp_path / "data", samples=False, program=command(64)) as served:
        # And an E observation 40 days old and one from yesterday, both searchable when written
        status, reply = call(
            served.url, served.key, "POST", "/v1/observations", {"observations": [_push("old", 40), _push("new", 1)]}
        )
        assert status in (200, 201), reply
        # When the server's own maintenance has run (no other process touches the folder)
        deadline = time.monotonic() + 60
        while "old" in _found(served.url, served.key, includeArchived=False) and time.monotonic() < deadline:
            time.sleep(0.5)
        # Then the old one is archived: still found, kept and readable, and left out when asked
        assert _found(served.url, served.key, includeArchived=False) == {"new"}
        assert _found(served.url, served.key) == {"old", "new"}
        status, record = call(served.url, served.key, "GET", "/v1/observations/old")
        assert status == 200 and record["archivedAt"], record
        output = served.stop()
    assert "daily maintenance" in output and "Traceback" not in output, output[-3000:]


def test_serve_without_maintenance_leaves_old_e_observations_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a server with its maintenance turned off (cron runs `purge` instead)
    monkeypatch.setenv("NM_MAINTENANCE_INTERVAL_HOURS", "0")
    with serve(tmp_path / "data", samples=False, program=command(64)) as served:
        status, reply = call(served.url, served.key, "POST", "/v1/observations", {"observations": [_push("old", 40)]})
        assert status in (200, 201), reply
        time.sleep(3)
        # Then nothing archived it
        assert _found(served.url, served.key) == {"old"}
        output = served.stop()
    assert "daily maintenance" not in output
