"""Without a browser the console's tests skip on a developer's machine and fail in CI."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.events import ROOT

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(("ci", "outcome"), [("true", "1 error"), ("", "1 skipped")])
def test_a_missing_chromium_fails_in_ci_and_skips_elsewhere(ci: str, outcome: str) -> None:
    # Given no Chromium where the tests look for it
    env = {**os.environ, "NM_CHROMIUM": str(ROOT / "no-such-chromium"), "CI": ci}
    # When a browser test runs
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["tests/browser/test_console.py::test_keyboard_slash_focuses_enter_runs_escape_clears"]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    # Then CI fails it, saying why, and a developer's run skips it
    assert outcome in run.stdout, run.stdout[-3000:]
    assert (run.returncode != 0) == (ci == "true")
    if ci:
        assert "CI=true: the browser tests must run" in run.stdout
