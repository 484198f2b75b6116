"""``agents install|uninstall claude-code`` on a project's files: merged with what they hold,
idempotent, the key only in ``.claude/settings.local.json``, and uninstall removes exactly what
install wrote."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.local.agents.claude_code import Target, install, installed_target, uninstall
from neural_memory.local.agents.hook_settings import HOOK_EVENTS

if TYPE_CHECKING:
    from pathlib import Path

KEY = "nm_0123456789ab_" + "k" * 43
URL = "http://127.0.0.1:8080"
THEIRS_MCP: dict[str, Any] = {"mcpServers": {"github": {"command": "gh-mcp", "args": []}}, "note": "kept"}
THEIRS_SETTINGS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
    },
}
THEIRS_LOCAL: dict[str, Any] = {"env": {"OTHER": "1"}, "permissions": {"deny": ["Read(.env)"]}}


@pytest.fixture(autouse=True)
def _state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The hooks' state folder (install's record of the files it changed) in the test's folder."""
    state = tmp_path / "state"
    monkeypatch.setenv("NM_HOOK_STATE_DIR", str(state))
    return state


def _files(project: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(project)): p.read_bytes()
        for p in sorted(project.rglob("*"))
        if p.is_file() and p.relative_to(project).parts[0] != "state"
    }


def _given_a_project_with_its_own_configuration(project: Path) -> None:
    (project / ".claude").mkdir(parents=True)
    (project / ".mcp.json").write_text(json.dumps(THEIRS_MCP))
    (project / ".claude" / "settings.json").write_text(json.dumps(THEIRS_SETTINGS))
    (project / ".claude" / "settings.local.json").write_text(json.dumps(THEIRS_LOCAL))
    (project / ".git" / "info").mkdir(parents=True)
    (project / ".git" / "info" / "exclude").write_text("# git ls-files --others --exclude-from=.git/info/exclude\n")


def test_install_merges_keeps_the_key_local_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    _given_a_project_with_its_own_configuration(tmp_path)
    # When the memory is installed for a running API with a key
    first = install(tmp_path, Target(url=URL), KEY)
    # Then each file holds what it held, and ours
    assert first.files == {
        ".mcp.json": "updated",
        ".claude/settings.json": "updated",
        ".claude/settings.local.json": "updated",
    }
    mcp = json.loads((tmp_path / ".mcp.json").read_text())
    assert mcp["note"] == "kept" and mcp["mcpServers"]["github"] == THEIRS_MCP["mcpServers"]["github"]
    assert mcp["mcpServers"]["neural-memory"]["args"] == ["mcp", "--url", URL]
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == THEIRS_SETTINGS["permissions"]
    assert settings["hooks"]["PreToolUse"] == THEIRS_SETTINGS["hooks"]["PreToolUse"]
    assert settings["hooks"]["Stop"][0] == THEIRS_SETTINGS["hooks"]["Stop"][0]  # theirs first, ours after
    for event, (timeout, _) in HOOK_EVENTS.items():
        (ours,) = [h for g in settings["hooks"][event] for h in g["hooks"] if "neural-memory-hook" in h["command"]]
        assert f"--url {URL}" in ours["command"] and ours["timeout"] == timeout
    # And the key is in settings.local.json only (mode 0600), kept out of git
    local = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    local["env"].pop("NM_AGENT_USER", None)  # the person, when git has a user.name here
    assert local == {"env": {"OTHER": "1", "NM_API_KEY": KEY}, "permissions": THEIRS_LOCAL["permissions"]}
    assert (tmp_path / ".claude" / "settings.local.json").stat().st_mode & 0o777 == 0o600
    committed = (tmp_path / ".mcp.json").read_text() + (tmp_path / ".claude" / "settings.json").read_text()
    assert KEY not in committed
    assert "/.claude/settings.local.json" in (tmp_path / ".git" / "info" / "exclude").read_text().splitlines()

    # When it is installed again, Then no file changes
    before = _files(tmp_path)
    second = install(tmp_path, Target(url=URL), KEY)
    assert set(second.files.values()) == {"unchanged"} and _files(tmp_path) == before


def test_uninstall_removes_exactly_what_install_wrote(tmp_path: Path) -> None:
    _given_a_project_with_its_own_configuration(tmp_path)
    before = {name: json.loads(text) if name.endswith(".json") else text for name, text in _files(tmp_path).items()}
    install(tmp_path, Target(url=URL), KEY)
    install(tmp_path, Target(url="http://127.0.0.1:9090"), None)  # a reinstall elsewhere replaces ours, never adds
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert sum("neural-memory-hook" in h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]) == 1
    assert installed_target(tmp_path) == Target(url="http://127.0.0.1:9090")
    # When it is uninstalled
    uninstall(tmp_path)
    # Then every file is as it was
    after = {name: json.loads(text) if name.endswith(".json") else text for name, text in _files(tmp_path).items()}
    assert after == before
    assert installed_target(tmp_path) is None


def test_install_into_an_empty_project_and_out_again_leaves_nothing(tmp_path: Path) -> None:
    install(tmp_path, Target(url=URL), None)
    assert not (tmp_path / ".claude" / "settings.local.json").exists()  # no key given: read from the environment
    assert {p.name for p in tmp_path.rglob("*")} == {".mcp.json", ".claude", "settings.json"}
    uninstall(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_embedded_store_gets_a_key_of_its_own_reused_by_a_second_install_and_revoked_by_uninstall(
    tmp_path: Path,
) -> None:
    from neural_memory.auth.factory import build_key_store
    from neural_memory.auth.keys import authenticate
    from neural_memory.errors import Unauthorized
    from neural_memory.settings import Settings

    project, data = tmp_path / "project", tmp_path / "data"
    project.mkdir()
    target = Target(data_dir=data, workspace="agent")
    install(project, target, None)
    key = json.loads((project / ".claude" / "settings.local.json").read_text())["env"]["NM_API_KEY"]
    keys = build_key_store(Settings(data_dir=data))
    assert authenticate(keys, key) == "agent"
    again = install(project, target, None)
    assert set(again.files.values()) == {"unchanged"}
    mcp = json.loads((project / ".mcp.json").read_text())["mcpServers"]["neural-memory"]
    assert mcp == {"command": "neural-memory", "args": ["mcp"]}  # this machine's folder: in the local settings
    local = json.loads((project / ".claude" / "settings.local.json").read_text())["env"]
    assert local["NM_DATA_DIR"] == str(data) and local["NM_WORKSPACE"] == "agent"
    assert str(data) not in (project / ".mcp.json").read_text() + (project / ".claude" / "settings.json").read_text()
    assert installed_target(project) == target
    uninstall(project)
    try:
        authenticate(keys, key)
        raise AssertionError("the key still opens the workspace")
    except Unauthorized:
        pass
    assert list(project.iterdir()) == []


def test_an_api_serving_mcp_gets_an_http_entry_whose_header_reads_the_key_from_the_environment(tmp_path: Path) -> None:
    _given_a_project_with_its_own_configuration(tmp_path)
    # When the memory is installed for an API that serves /mcp
    install(tmp_path, Target(url=URL, http_mcp=True), KEY)
    # Then Claude Code reaches its /mcp over HTTP, the header naming the variable, never the key
    mcp = json.loads((tmp_path / ".mcp.json").read_text())
    assert mcp["mcpServers"]["neural-memory"] == {
        "type": "http",
        "url": f"{URL}/mcp",
        "headers": {"Authorization": "Bearer ${NM_API_KEY}"},
    }
    assert KEY not in (tmp_path / ".mcp.json").read_text()
    assert json.loads((tmp_path / ".claude" / "settings.local.json").read_text())["env"]["NM_API_KEY"] == KEY
    assert mcp["mcpServers"]["github"] == THEIRS_MCP["mcpServers"]["github"]
    # And the installed target reads back as it was written (status and uninstall use it)
    assert installed_target(tmp_path) == Target(url=URL, http_mcp=True)
    # When it is installed again as a local process, Then that replaces the HTTP entry
    install(tmp_path, Target(url=URL), KEY)
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["neural-memory"]["args"] == [
        "mcp",
        "--url",
        URL,
    ]
    install(tmp_path, Target(url=URL, http_mcp=True), KEY)
    # And uninstall takes it out, leaving theirs
    uninstall(tmp_path)
    assert json.loads((tmp_path / ".mcp.json").read_text()) == THEIRS_MCP


FOUR_SPACES_MCP = (
    '{\n    "mcpServers": {\n        "github": {"command": "gh-mcp", "args": []}\n    },\n    "note": "kept"\n}'
)
TABBED_SETTINGS = '{\n\t"permissions": {\n\t\t"allow": ["Bash(make test)", "Read(docs/é.md)"]\n\t}\n}\n'


def _given_files_formatted_their_own_way(project: Path) -> dict[str, bytes]:
    (project / ".claude").mkdir(parents=True)
    (project / ".mcp.json").write_text(FOUR_SPACES_MCP)  # four spaces, a line packed, no final newline
    (project / ".claude" / "settings.json").write_text(TABBED_SETTINGS)  # tabs, a character beyond ASCII
    return _files(project)


def test_install_then_uninstall_gives_back_the_very_bytes_and_a_reinstall_writes_nothing(tmp_path: Path) -> None:
    before = _given_files_formatted_their_own_way(tmp_path)
    install(tmp_path, Target(url=URL), KEY)
    # Then what install changed keeps the file's indentation, characters and (missing) final newline
    mcp = (tmp_path / ".mcp.json").read_text()
    assert '\n    "mcpServers": {\n        "github"' in mcp and not mcp.endswith("\n")
    settings = (tmp_path / ".claude" / "settings.json").read_text()
    assert '\n\t"permissions"' in settings and "docs/é.md" in settings and settings.endswith("\n")
    installed = _files(tmp_path)
    # When it is installed again, Then nothing is written
    assert set(install(tmp_path, Target(url=URL), KEY).files.values()) == {"unchanged"}
    assert _files(tmp_path) == installed
    # When it is uninstalled, Then each file is byte for byte what it was (no whitespace diff in git)
    uninstall(tmp_path)
    assert _files(tmp_path) == before


def test_an_uninstall_on_another_machine_keeps_the_files_indentation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _given_files_formatted_their_own_way(tmp_path)
    install(tmp_path, Target(url=URL), KEY)
    # When a teammate (no record of what the files were before) uninstalls it
    monkeypatch.setenv("NM_HOOK_STATE_DIR", str(tmp_path / "state-elsewhere"))
    uninstall(tmp_path)
    # Then the files hold what they held, in their own indentation
    settings = (tmp_path / ".claude" / "settings.json").read_text()
    assert json.loads(settings) == json.loads(TABBED_SETTINGS) and settings.startswith('{\n\t"permissions"')
    mcp = (tmp_path / ".mcp.json").read_text()
    assert json.loads(mcp) == json.loads(FOUR_SPACES_MCP) and mcp.startswith('{\n    "mcpServers"')


def _git_repository(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", "git@github.com:acme/console.git"], check=True)
    subprocess.run(["git", "-C", str(root), "config", "user.name", "Ann Lee"], check=True)
    return root


def test_the_repositorys_own_memory_is_installed_without_a_path_of_this_machine(tmp_path: Path) -> None:
    from neural_memory.local.agents.repository_memory import repository_memory

    project = _git_repository(tmp_path / "console")
    # When the memory is installed with no folder and no URL
    install(project, Target(), None)
    # Then the committed files hold commands PATH resolves and nothing of this machine
    committed = (project / ".mcp.json").read_text() + (project / ".claude" / "settings.json").read_text()
    assert str(tmp_path) not in committed and "nm_" not in committed
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["neural-memory"] == {
        "command": "neural-memory",
        "args": ["mcp"],
    }
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks["SessionStart"][0]["hooks"][0]["command"] == "neural-memory-hook"
    # And the memory is the repository's: .neural-memory at its root (out of git), workspace acme.console
    memory = repository_memory(project)
    assert memory is not None and memory.exists()
    assert (memory.data_dir, memory.workspace) == (project / ".neural-memory", "acme.console")
    assert "/.neural-memory/" in (project / ".git" / "info" / "exclude").read_text().splitlines()
    local = json.loads((project / ".claude" / "settings.local.json").read_text())["env"]
    assert local["NM_AGENT_USER"] == "Ann Lee" and "NM_DATA_DIR" not in local
    assert installed_target(project) == Target(data_dir=memory.data_dir, workspace="acme.console")


def test_a_teammates_install_on_the_committed_files_changes_only_their_local_settings(tmp_path: Path) -> None:
    from neural_memory.local.cli import main

    lead = _git_repository(tmp_path / "lead")
    install(lead, Target(url=URL, http_mcp=True, repository="acme/console"), KEY, budget_tokens=900)
    entry = json.loads((lead / ".mcp.json").read_text())["mcpServers"]["neural-memory"]
    assert entry["headers"] == {
        "Authorization": "Bearer ${NM_API_KEY}",
        "X-Neural-Memory-Repository": "acme/console",
        "X-Neural-Memory-Actor": "${NM_AGENT_USER:-}",
    }
    # Given a teammate's clone holding the committed files (not the lead's local settings)
    mate = _git_repository(tmp_path / "mate")
    subprocess.run(["git", "-C", str(mate), "config", "user.name", "Bo Chen"], check=True)
    (mate / ".claude").mkdir()
    for name in (".mcp.json", ".claude/settings.json"):
        (mate / name).write_bytes((lead / name).read_bytes())
    committed = {name: (mate / name).read_bytes() for name in (".mcp.json", ".claude/settings.json")}
    # When the teammate installs with their own key and nothing else
    assert (
        main(["agents", "install", "claude-code", "--project", str(mate), "--key", "nm_bbbbbbbbbbbb_" + "b" * 43]) == 0
    )
    # Then the committed files are byte for byte the same, and their key and name are local
    assert {name: (mate / name).read_bytes() for name in committed} == committed
    local = json.loads((mate / ".claude" / "settings.local.json").read_text())["env"]
    assert local == {"NM_API_KEY": "nm_bbbbbbbbbbbb_" + "b" * 43, "NM_AGENT_USER": "Bo Chen"}
