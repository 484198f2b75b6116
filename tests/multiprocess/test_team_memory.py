"""The README's paths for a team, followed as people follow them (issue 54): a repository cloned
from GitHub whose history ends 90 days ago, the package on PATH, a HOME per person, commands with
no flag the README does not show, and the installed hooks run as Claude Code runs them.

- solo: ``import git .`` and ``agents install claude-code --project .`` in the repository reach the
  same memory; the hooks recall an imported pull request; the first SessionStart answers within
  3 s with a brief; the committed files hold no path of this machine and no key; a decision
  ``remember``ed over stdio reaches the next session's brief; ``ask``, ``who`` and ``search`` answer
  from inside the repository without flags.
- team: a shared API; the lead imports the history and installs with ``--url`` and their key, and
  commits the files; a teammate (their own HOME and clone) installs with their own key only: the
  committed files stay byte for byte, and their hooks recall the imported PR; a decision
  ``remember``ed over ``/mcp`` with the headers ``.mcp.json`` gives reaches the next brief."""

from __future__ import annotations

import json
import subprocess
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.git_repos import old_github_history
from tests.helpers.mcp_sessions import free_port
from tests.helpers.processes import call
from tests.helpers.team_machines import BIN, Machine

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.integration

PR_12 = "github-pr-acme.console-12-pull_request_merged"
PROMPT = "How do we retry webhook deliveries when the receiver fails? I need to change the backoff."
DECISION = "We decided to cap webhook retries at five attempts, because receivers rate limit us."


def context(stdout: str) -> str:
    return str(json.loads(stdout)["hookSpecificOutput"]["additionalContext"]) if stdout.strip() else ""


def committed_files(project: Path) -> dict[str, bytes]:
    return {name: (project / name).read_bytes() for name in (".mcp.json", ".claude/settings.json")}


@pytest.fixture
def solo(tmp_path: Path) -> Iterator[tuple[Machine, Path]]:
    machine = Machine(tmp_path / "home", "Ann Lee")
    project = old_github_history(tmp_path / "console", days_ago=90)
    yield machine, project
    machine.run(
        "neural-memory", "agents", "uninstall", "claude-code", "--project", ".", cwd=project
    )  # stops its server


def test_solo_the_repositorys_history_and_agent_share_one_memory_with_no_flags(solo: tuple[Machine, Path]) -> None:
    machine, project = solo
    # When, inside the repository, the history is imported and Claude Code installed, with no flags
    imported = machine.run("neural-memory", "import", "git", ".", cwd=project)
    assert imported.returncode == 0, imported.stderr
    assert "workspace acme.console" in imported.stderr
    installed = machine.run("neural-memory", "agents", "install", "claude-code", "--project", ".", cwd=project)
    assert installed.returncode == 0, installed.stderr
    # Then install says where the memory is: the same folder and workspace
    assert f"memory: {project / '.neural-memory'}, workspace acme.console" in installed.stdout
    # And the committed files hold no path of this machine and no key
    key = json.loads((project / ".claude" / "settings.local.json").read_text())["env"]["NM_API_KEY"]
    for name, text in committed_files(project).items():
        assert str(project) not in text.decode() and str(BIN) not in text.decode() and key not in text.decode(), name
        assert '"/' not in text.decode(), f"{name} holds an absolute path"
    # And git sees only the files a team commits (the memory and the key stay out of it)
    status = machine.run("git", "status", "--porcelain", cwd=project).stdout.split("\n")
    assert sorted(line[3:] for line in status if line) == [".claude/", ".mcp.json"]
    assert sorted(p.name for p in (project / ".claude").iterdir()) == ["settings.json", "settings.local.json"]

    # When the first session starts, Then its brief answers within 3 s and says something useful
    brief, seconds = machine.hook(project, "SessionStart", {"source": "startup"})
    assert seconds < 3.0, f"the first SessionStart took {seconds:.1f} s"
    assert "acme/console" in context(brief) and "Latest changes to acme/console" in context(brief)
    assert "Retry webhook deliveries" in context(brief), context(brief)
    # And a prompt about it recalls the imported pull request
    recall, _ = machine.hook(project, "UserPromptSubmit", {"prompt": PROMPT, "session_id": "s-2"})
    assert PR_12 in context(recall)

    # And the command line answers from inside the repository, without flags
    asked = machine.run("neural-memory", "ask", "how do we retry webhook deliveries?", cwd=project / "src")
    assert asked.returncode == 0, asked.stderr
    assert "Sources:" in asked.stdout and PR_12 in asked.stdout
    who = machine.run("neural-memory", "who", "webhook retries", cwd=project)
    assert who.returncode == 0, who.stderr
    assert who.stdout.startswith("1. Bo Chen") and PR_12 in who.stdout
    found = machine.run("neural-memory", "search", "webhook retry backoff", cwd=project)
    assert "by Bo Chen" in found.stdout
    for output in (asked, who, found):  # logs in the log file, and no provider never configured
        assert "{" not in output.stderr and "not configured" not in output.stdout + output.stderr

    # When the agent remembers a decision over its stdio MCP server (as .mcp.json starts it)
    (saved,) = machine.stdio_mcp(
        project, [("remember", {"observations": [{"content": DECISION, "observationType": "decision"}]})]
    )
    assert not saved["isError"], saved
    # Then the next session's brief lists it among the repository's decisions, said by Ann
    brief, _ = machine.hook(project, "SessionStart", {"source": "startup", "session_id": "s-3"})
    decisions = context(brief).split("decisions about acme/console:")[1]
    assert "cap webhook retries at five attempts" in decisions and "Ann Lee" in decisions


def test_solo_install_brings_the_history_in_when_asked_and_says_so_when_not(solo: tuple[Machine, Path]) -> None:
    machine, project = solo
    # When Claude Code is installed with nothing on standard input and no history imported
    installed = machine.run("neural-memory", "agents", "install", "claude-code", "--project", ".", cwd=project)
    assert installed.returncode == 0, installed.stderr
    # Then it says how to bring the history in, and where the memory is
    assert f"history: not imported yet: `neural-memory import git {project}`" in installed.stdout
    assert "workspace acme.console" in installed.stdout
    # When it is installed again with --import-history, Then the history is in that memory
    again = machine.run(
        "neural-memory", "agents", "install", "claude-code", "--project", ".", "--import-history", cwd=project
    )
    assert again.returncode == 0, again.stderr
    assert "history: not imported yet" not in again.stdout
    who = machine.run("neural-memory", "who", "webhook retries", cwd=project)
    assert who.stdout.startswith("1. Bo Chen") and PR_12 in who.stdout, who.stdout + who.stderr


@pytest.fixture
def shared_api(tmp_path: Path) -> Iterator[tuple[str, Path, Machine]]:
    """``neural-memory serve`` on a team machine (no demo), its data folder, and that machine."""
    server_machine = Machine(tmp_path / "server-home", "Ops")
    data = tmp_path / "team-data"
    port = free_port()
    served = subprocess.Popen(
        ["neural-memory", "serve", "--no-demo", "--quiet", "--port", str(port), "--data-dir", str(data)],
        cwd=tmp_path,
        env=server_machine.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while call(url, "-", "GET", "/", timeout=2)[0] != 200:
        assert served.poll() is None and time.monotonic() < deadline, served.stderr.read() if served.stderr else ""
        time.sleep(0.3)
    try:
        yield url, data, server_machine
    finally:
        served.terminate()
        served.wait(timeout=60)


def key_for(machine: Machine, data: Path, workspace: str) -> str:
    made = machine.run(
        "neural-memory", "keys", "create", "--workspace", workspace, "--data-dir", str(data), cwd=data.parent
    )
    assert made.returncode == 0, made.stderr
    return made.stdout.strip().splitlines()[-1]


def test_team_a_teammate_installs_with_their_own_key_and_the_committed_files_stay_byte_for_byte(
    tmp_path: Path, shared_api: tuple[str, Path, Machine]
) -> None:
    url, data, server_machine = shared_api
    k1, k2 = key_for(server_machine, data, "acme.console"), key_for(server_machine, data, "acme.console")
    lead, mate = Machine(tmp_path / "lead-home", "Ann Lee"), Machine(tmp_path / "mate-home", "Bo Chen")
    project = old_github_history(tmp_path / "lead" / "console", days_ago=90)
    # Given the lead imported the history into the shared data folder (its workspace: the repository's)
    imported = lead.run("neural-memory", "import", "git", ".", "--data-dir", str(data), cwd=project)
    assert imported.returncode == 0, imported.stderr
    # And installed Claude Code for the shared API with their key, and committed both files
    installed = lead.run(
        "neural-memory",
        "agents",
        "install",
        "claude-code",
        "--project",
        str(project),
        "--url",
        url,
        "--key",
        k1,
        cwd=project,
    )
    assert installed.returncode == 0, installed.stderr
    lead.run("git", "add", ".mcp.json", ".claude/settings.json", cwd=project)
    assert lead.run("git", "commit", "-q", "-m", "Team memory for Claude Code", cwd=project).returncode == 0

    # When a teammate clones it (from GitHub, as its origin says) and installs with their own key only
    clone = tmp_path / "mate" / "console"
    assert mate.run("git", "clone", "-q", str(project), str(clone), cwd=tmp_path).returncode == 0
    mate.run("git", "remote", "set-url", "origin", "https://github.com/acme/console.git", cwd=clone)
    committed = committed_files(clone)
    installed = mate.run("neural-memory", "agents", "install", "claude-code", "--project", ".", "--key", k2, cwd=clone)
    assert installed.returncode == 0, installed.stderr
    # Then the committed files are byte for byte the same, and only the excluded local settings changed
    assert committed_files(clone) == committed
    assert mate.run("git", "status", "--porcelain", cwd=clone).stdout == ""
    assert json.loads((clone / ".claude" / "settings.local.json").read_text())["env"]["NM_API_KEY"] == k2
    # And the teammate's hooks recall the imported pull request from the shared API
    recall, _ = mate.hook(clone, "UserPromptSubmit", {"prompt": PROMPT})
    assert PR_12 in context(recall)

    # When the teammate's agent remembers a decision over /mcp with the headers .mcp.json gives
    mcp_url, headers = mate.mcp_headers(clone)
    assert headers["X-Neural-Memory-Repository"] == "acme/console" and headers["X-Neural-Memory-Actor"] == "Bo Chen"
    saved = _post_mcp(
        mcp_url, headers, "remember", {"observations": [{"content": DECISION, "observationType": "decision"}]}
    )
    assert not saved["isError"], saved
    # Then the lead's next session's brief lists it, said by Bo
    brief, _ = lead.hook(project, "SessionStart", {"source": "startup", "session_id": "lead-2"})
    decisions = context(brief).split("decisions about acme/console:")[1]
    assert "cap webhook retries at five attempts" in decisions and "Bo Chen" in decisions


def _post_mcp(url: str, headers: dict[str, str], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    import urllib.request

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={**headers, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as reply:  # loopback only
        result: dict[str, Any] = json.loads(reply.read())["result"]
        return result
