"""The operator's commands over a data folder, run as a user runs them (real processes on real
files): ``backup`` while servers write, ``restore`` refused while a process uses the folder, and
``check``'s verdicts (exit 0/1) on healthy, stale, damaged and loose folders."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from typing import TYPE_CHECKING

import pytest

from tests.helpers.processes import DATABASE, call, cli, http_writer, integrity, mcp_writer, notes, writers
from tests.helpers.serve import serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration
SNAPSHOT = "neural-memory.mirror.npz"


def _folder_with(data: Path, word: str) -> str:
    """A data folder holding a key for workspace ``w`` and three notes holding ``word`` (written by
    real CLI processes); returns the key."""
    created = cli("keys", "create", "--workspace", "w", "--data-dir", str(data))
    assert created.returncode == 0, created.stderr
    jsonl = data.parent / f"{word}.jsonl"
    jsonl.write_text("\n".join(json.dumps(n) for n in notes(word, 3)) + "\n")
    ingested = cli("ingest", str(jsonl), "--workspace", "w", "--data-dir", str(data))
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    return created.stdout.strip().splitlines()[-1]


def _found(url: str, key: str, word: str) -> set[str]:
    status, reply = call(url, key, "POST", "/v1/search", {"query": word, "mode": "keyword", "topK": 20})
    assert status == 200, reply
    return {r["id"] for r in reply["results"]}


def test_check_passes_a_healthy_folder_and_fails_a_missing_one(tmp_path: Path) -> None:
    # Given a folder written by the CLI, and one that holds nothing
    _folder_with(tmp_path / "data", "alphaword")
    # When checked, Then the healthy one exits 0 with every line ok, the empty one exits 1
    checked = cli("check", "--data-dir", str(tmp_path / "data"))
    assert checked.returncode == 0, checked.stdout
    assert "FAIL" not in checked.stdout and "integrity: ok" in checked.stdout and "schema version: 1" in checked.stdout
    assert "model: all-MiniLM-L6-v2" in checked.stdout, checked.stdout
    missing = cli("check", "--data-dir", str(tmp_path / "nothing"))
    assert missing.returncode == 1 and "no database" in missing.stdout


def test_check_rebuilds_a_damaged_saved_mirror_and_reports_files_open_to_others(tmp_path: Path) -> None:
    # Given a folder whose saved mirror (the in-memory index's snapshot) is garbage
    data = tmp_path / "data"
    _folder_with(data, "alphaword")
    assert cli("check", "--data-dir", str(data)).returncode == 0  # builds the snapshot
    (data / SNAPSHOT).write_bytes(b"not a snapshot" * 50)
    # When checked, Then it says so (exit 1) and rebuilds it: the next check is clean
    damaged = cli("check", "--data-dir", str(data))
    assert damaged.returncode == 1 and "saved mirror: damaged, rebuilt" in damaged.stdout, damaged.stdout
    assert cli("check", "--data-dir", str(data)).returncode == 0
    # And a database file made readable by others (no process holds it) is named, with the fix
    os.chmod(data / DATABASE, 0o644)
    loose = cli("check", "--data-dir", str(data))
    assert loose.returncode == 1 and f"{DATABASE} (0644, tightened now)" in loose.stdout, loose.stdout
    assert stat.S_IMODE((data / DATABASE).stat().st_mode) == 0o600
    os.chmod(data / "demo-api-key" if (data / "demo-api-key").exists() else data / SNAPSHOT, 0o640)
    still = cli("check", "--data-dir", str(data))
    assert still.returncode == 1 and "(0640)" in still.stdout and "chmod 600" in still.stdout, still.stdout


def test_check_fails_a_damaged_database(tmp_path: Path) -> None:
    # Given a database whose pages were overwritten on disk while no process held it
    data = tmp_path / "data"
    _folder_with(data, "alphaword")
    with (data / DATABASE).open("r+b") as raw:  # no process holds the file: the damage a disk does
        raw.seek(3 * 4096)
        raw.write(b"\xff" * 4096)
    # When checked, Then integrity fails and the exit code says so
    checked = cli("check", "--data-dir", str(data))
    assert checked.returncode == 1 and "FAIL" in checked.stdout and "integrity" in checked.stdout, checked.stdout


def test_restore_is_refused_while_a_server_uses_the_folder_and_the_server_keeps_serving(tmp_path: Path) -> None:
    # Given a backup of one folder, and a server running on another
    source = tmp_path / "source"
    _folder_with(source, "alphaword")
    assert cli("backup", str(tmp_path / "copy"), "--data-dir", str(source)).returncode == 0
    with serve(tmp_path / "live") as served:
        # When the backup is restored onto the server's folder
        restored = cli("restore", str(tmp_path / "copy"), "--data-dir", str(tmp_path / "live"))
        # Then it is refused, naming why, and the server still answers from its own data
        assert restored.returncode == 1 and "uses" in restored.stderr, restored.stderr
        assert _found(served.url, served.key, "deploy")
        assert _found(served.url, served.key, "alphaword") == set()


def test_backup_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    _folder_with(tmp_path / "data", "alphaword")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    refused = cli("backup", str(tmp_path / "busy"), "--data-dir", str(tmp_path / "data"))
    assert refused.returncode == 1 and "not empty" in refused.stderr
    assert [p.name for p in (tmp_path / "busy").iterdir()] == ["notes.txt"]


def test_restore_over_a_folder_brings_back_the_backup_and_nothing_written_since(tmp_path: Path) -> None:
    # Given a folder backed up, then written to again, its server stopped (its mirror saved)
    data = tmp_path / "data"
    key = _folder_with(data, "alphaword")
    backed = cli("backup", str(tmp_path / "copy"), "--data-dir", str(data))
    assert backed.returncode == 0, backed.stderr
    assert stat.S_IMODE((tmp_path / "copy").stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in (tmp_path / "copy").iterdir())
    later = notes("betaword", 2)
    with serve(data) as served:
        assert call(served.url, key, "POST", "/v1/observations", {"observations": later})[0] == 200
        assert _found(served.url, key, "betaword") == {"betaword-0", "betaword-1"}
    # When the backup is restored, and a server started again on the folder
    restored = cli("restore", str(tmp_path / "copy"), "--data-dir", str(data))
    assert restored.returncode == 0, restored.stderr
    with serve(data) as served:
        # Then it serves the backup's notes, not the later ones (the saved mirror of the later
        # state is never taken for the restored file's), and the backup's key works
        assert _found(served.url, key, "alphaword") == {"alphaword-0", "alphaword-1", "alphaword-2"}
        assert _found(served.url, key, "betaword") == set()
    assert integrity(data / DATABASE) == "ok"
    assert cli("check", "--data-dir", str(data)).returncode == 0


def test_a_backup_taken_while_three_writers_run_restores_every_write_acknowledged_before_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    copies: list[tuple[Path, set[str], set[str]]] = []  # backup folder, acks before it began, acks when it ended
    with serve(data, samples=False) as served:
        specs = [http_writer("ha", served.url, served.key), http_writer("hb", served.url, served.key)]
        specs.append(mcp_writer("ma", data))
        # Given three writers on the folder (two through the server, one through its own process),
        # writing until told to stop: a slow start of one never leaves the others done already
        with writers(specs, seconds=240) as run:
            for name in ("ha", "hb", "ma"):
                run.wait_for_acks(name, 2)
            # When a backup is taken while they keep writing (again, up to five times, until a
            # write was acknowledged while one ran: how long a batch takes is the machine's)
            for attempt in range(5):
                before = set(run.ids)
                backed = cli("backup", str(tmp_path / f"copy{attempt}"), "--data-dir", str(data))
                assert backed.returncode == 0, backed.stderr
                copies.append((tmp_path / f"copy{attempt}", before, set(run.ids)))
                if len(copies[-1][2]) > len(before):
                    break
            run.stop()
        begun = {i for w in run.writers.values() for e in w.events if "begin" in e for i in e["ids"]}
        assert not [e for w in run.writers.values() for e in w.errors], "a writer saw an error"
    assert len(copies[-1][2]) > len(copies[-1][1]), "no write was acknowledged during any of five backups"
    # Then each copy, restored into a fresh folder, checks, holds every write acknowledged before
    # its backup began, and nothing that was never written
    for copy, before, _ in copies:
        fresh = tmp_path / f"fresh-{copy.name}"
        assert cli("restore", str(copy), "--data-dir", str(fresh)).returncode == 0
        with sqlite3.connect(f"file:{fresh / DATABASE}?mode=ro", uri=True) as conn:
            restored = {row[0] for row in conn.execute("SELECT id FROM observations WHERE workspace_id = 'demo'")}
        assert integrity(fresh / DATABASE) == "ok"
        assert before <= restored, sorted(before - restored)[:5]
        assert restored <= begun, sorted(restored - begun)[:5]
        assert cli("check", "--data-dir", str(fresh)).returncode == 0
