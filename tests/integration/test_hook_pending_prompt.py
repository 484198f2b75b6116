"""Issue 56: the prompt hook's stash of the turn under way (``pending/<session>.json`` in the hook's
state folder) never holds a secret the prompt pasted, even for a session that never reaches Stop;
and a Stop right after the prompt still captures the prompt (redacted) it waited for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

HOOK = Path(sys.executable).parent / "neural-memory-hook"
TOKEN = "ghp_" + "Pq4Wr8Ty2Ui6Op0As4Df8Gh2Jk6Lz0Xc4Vb8"
ANT = "sk-ant-api03-" + "Mn2Bv4Cx6Za8Sd0Fg2Hj4Kl6Qw8Er0Ty2Ui4Op6As8Df0Gh2Jk4Lz6Xc8Vb0Nm2Qw4Er6AA"
PROMPT = f"deploy fails: export GITHUB_TOKEN={TOKEN}, and the key is in tmp_{ANT}.txt"


def _run(state: Path, payload: dict[str, object]) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "NM_HOOK_STATE_DIR": str(state), "NM_API_KEY": "", "NM_URL": "http://127.0.0.1:9"}
    return subprocess.run(
        [str(HOOK), "--timeout", "2"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


def _settled(pending: Path, timeout: float = 30) -> str:
    """The stash once its secrets are replaced (the child that does it writes it and removes the marker)."""
    deadline = time.monotonic() + timeout
    while not pending.exists() or pending.with_name(pending.name + ".stashing").exists():
        assert time.monotonic() < deadline, f"no stash at {pending}"
        time.sleep(0.05)
    return pending.read_text()


def test_a_session_that_never_stops_leaves_no_secret_in_its_pending_prompt(tmp_path: Path) -> None:
    state = tmp_path / "state"
    event = {"session_id": "s-56", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}
    done = _run(state, {**event, "prompt_id": "p-1"})
    assert done.returncode == 0, done.stderr
    stash = _settled(state / "pending" / "s-56.json")
    assert TOKEN not in stash
    assert ANT not in stash
    assert "[redacted:github-token]" in json.loads(stash)["prompt"]
    every_file = "".join(p.read_text(errors="replace") for p in state.rglob("*") if p.is_file())
    assert TOKEN not in every_file
    assert ANT not in every_file
