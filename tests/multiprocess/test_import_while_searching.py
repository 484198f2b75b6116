"""A long ``import git`` beside a running ``serve`` on the same data folder: the server answers
searches of what each written batch holds while the import goes on, and everything once it ends.
A hashing test model stands in for the local one (``tests/helpers/hash_cli``), slowed so the import
lasts."""

from __future__ import annotations

import subprocess
import time
from typing import TYPE_CHECKING

import pytest

from tests.helpers.git_repos import squashed_history
from tests.helpers.hash_cli import command
from tests.helpers.processes import broken, call
from tests.helpers.serve import serve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

MODEL, SLOW = command(64), command(64, 0.5)  # each embedding batch of the import takes 0.5 s at least


def _found(url: str, key: str, word: str) -> list[str]:
    status, reply = call(
        url, key, "POST", "/v1/search", {"query": word, "topK": 5, "mode": "keyword", "llmFilter": False}
    )
    assert status == 200, reply
    return [r["id"] for r in reply["results"]]


def test_search_answers_from_a_running_server_while_a_long_import_writes_the_same_folder(tmp_path: Path) -> None:
    root = tmp_path / "web"
    squashed_history(root, 600, "Teach the parser word{n}")  # 1,200 events: 5 batches
    data = tmp_path / "data"
    with serve(data, samples=False, program=MODEL) as served:
        # Given an import of a long history into the server's workspace, in another process
        args = ["import", "git", str(root), "--repo", "acme/web", "--workspace", "demo", "--data-dir", str(data)]
        importing = subprocess.Popen([*SLOW, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # When the first batch is written and the import goes on
            deadline = time.monotonic() + 120
            while not _found(served.url, served.key, "word1") and time.monotonic() < deadline:
                time.sleep(0.2)
            # Then the server finds what was written, while the import is still running
            assert importing.poll() is None, importing.communicate()
            assert "github-pr-acme.web-1-pull_request_merged" in _found(served.url, served.key, "word1")
            assert _found(served.url, served.key, "word600") == []
            out, err = importing.communicate(timeout=300)
        finally:
            if importing.poll() is None:
                importing.kill()
        # And once it ends, everything
        assert importing.returncode == 0 and "1200 created" in out, err
        assert "github-pr-acme.web-600-pull_request_merged" in _found(served.url, served.key, "word600")
    assert not broken(served.output or ""), served.output
