"""The real Claude Code CLI (npm ``@anthropic-ai/claude-code``, pinned; ``make claude-code`` puts it
in ``.tools/``) run non-interactively as a user runs it in a project, against the Messages API
stand-in (``anthropic_stand_in``): no key, no network, a temporary HOME, nothing of the test's
environment leaking in.

Pitfalls this handles (found running it here): tests run as root, where
``--dangerously-skip-permissions`` is refused, so tools are granted with ``--allowedTools`` (a
tool not granted comes back to the model as an error and the run still "succeeds": assert on what
the stand-in received, never on the exit code); MCP servers connect in the background in ``-p``
mode, so a slow one would be missing from the first request: ``MCP_CONNECTION_NONBLOCKING=0``
makes the CLI wait for it (up to ``MCP_CONNECT_TIMEOUT_MS``); without the telemetry and
non-essential-traffic switches it also calls Anthropic's own hosts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # this virtualenv's bin: neural-memory and neural-memory-hook
VERSION = "2.1.197"  # the Makefile's CLAUDE_CODE_VERSION
CLI = ROOT / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"
MODEL = "claude-sonnet-4-5"


def claude_cli() -> Path:
    """The pinned CLI; the test skips without it (fails with ``CI=true``: make test installs it)."""
    problem = None
    if not CLI.exists():
        problem = f"no Claude Code CLI at {CLI}: run `make claude-code` (npm)"
    else:
        found = subprocess.run([str(CLI), "--version"], capture_output=True, text=True, timeout=60, check=False)
        if not found.stdout.startswith(f"{VERSION} "):
            problem = (
                f"{CLI} is {found.stdout.strip() or found.stderr.strip()!r}, not {VERSION}: run `make claude-code`"
            )
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: the Claude Code tests must run: {problem}")
        pytest.skip(problem)
    return CLI


@dataclass
class Run:
    """One ``claude -p`` run: its exit code, the JSON it printed and its standard error."""

    returncode: int
    result: dict[str, Any]
    stderr: str

    @property
    def session_id(self) -> str:
        return str(self.result["session_id"])


def environment(home: Path, api_url: str) -> dict[str, str]:
    """The CLI's whole environment: a temporary HOME, the stand-in as the API, no other traffic."""
    return {
        "HOME": str(home),
        "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin",  # the package on PATH: the hooks are run by name
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "sk-ant-stand-in",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "MCP_CONNECTION_NONBLOCKING": "0",  # connect the MCP servers before the first request
        "MCP_CONNECT_TIMEOUT_MS": "120000",  # the embedded server loads the model on a busy 2-core machine
    }


def run_claude(
    prompt: str,
    *,
    project: Path,
    home: Path,
    api_url: str,
    allowed_tools: list[str],
    debug_file: Path,
    timeout: float = 300,
) -> Run:
    """``claude -p PROMPT`` in ``project`` (its ``.mcp.json`` and ``.claude/`` settings as they are)."""
    env = environment(home, api_url)
    command = [
        str(claude_cli()),
        "-p",
        prompt,
        "--output-format",
        "json",
        "--model",
        MODEL,
        "--allowedTools",
        ",".join(allowed_tools),
        "--debug-file",
        str(debug_file),
    ]
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    try:
        result = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise AssertionError(f"claude printed no JSON result: {done.stdout[-2000:]}\n{done.stderr[-2000:]}") from None
    return Run(done.returncode, result, done.stderr)
