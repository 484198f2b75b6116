"""Issue 56: a data folder made for Neural Memory is private from its first use, whichever command
uses it first (``keys create``, ``serve``, ``ingest``), so ``check`` passes on it; a folder that
holds anything else is the user's and is left as it is."""

from __future__ import annotations

import json
import stat
from typing import TYPE_CHECKING

import pytest

from tests.helpers.processes import cli
from tests.helpers.serve import serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def _made(path: Path) -> Path:
    """``mkdir DIR`` as a user types it (0755 under the usual umask)."""
    path.mkdir()
    path.chmod(0o755)
    return path


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _checked(data: Path) -> str:
    done = cli("check", "--data-dir", str(data))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_keys_create_on_a_folder_just_made_leaves_it_private_and_check_passes(tmp_path: Path) -> None:
    data = _made(tmp_path / "data")
    done = cli("keys", "create", "--workspace", "team", "--data-dir", str(data), "--embedder", "none")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _mode(data) == 0o700
    assert "file modes: the folder (0700) and every file (0600) are private" in _checked(data)


def test_serve_and_ingest_on_a_folder_just_made_leave_it_private(tmp_path: Path) -> None:
    served_dir = _made(tmp_path / "served")
    with serve(served_dir, samples=False):
        assert _mode(served_dir) == 0o700
    _checked(served_dir)
    ingested = _made(tmp_path / "ingested")
    notes = tmp_path / "notes.jsonl"
    note = {"id": "n1", "source": "manual", "observationType": "note", "occurredAt": "2026-01-15T09:00:00Z",
            "title": "Deploy", "content": "Deploys go out on Tuesdays."}  # fmt: skip
    notes.write_text(json.dumps(note) + "\n")
    done = cli("ingest", str(notes), "--workspace", "team", "--data-dir", str(ingested))
    assert done.returncode == 0, done.stdout + done.stderr
    assert _mode(ingested) == 0o700
    _checked(ingested)


def test_a_folder_holding_the_users_own_files_is_left_as_it_is(tmp_path: Path) -> None:
    shared = _made(tmp_path / "shared")
    (shared / "notes.txt").write_text("mine\n")
    done = cli("keys", "create", "--workspace", "team", "--data-dir", str(shared), "--embedder", "none")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _mode(shared) == 0o755
    assert _mode(shared / "neural-memory.sqlite3") == 0o600
