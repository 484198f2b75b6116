"""``agents install|uninstall claude-code`` on a project's files: merged with what they hold,
idempotent, the key only in ``.claude/settings.local.json``, and uninstall removes exactly what
install wrote."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from neural_memory.agents.claude_code import HOOK_EVENTS, Target, install, installed_target, uninstall

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


def _files(project: Path) -> dict[str, bytes]:
    return {str(p.relative_to(project)): p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}


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
    assert mcp["args"] == ["mcp", "--data-dir", str(data), "--workspace", "agent"]
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
