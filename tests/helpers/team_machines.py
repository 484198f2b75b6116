"""A person's machine, for tests that follow the README as a user does: the package on PATH (this
virtualenv's ``bin``, by name), a HOME of its own, nothing else of the test's environment; the CLI
run in a folder with no flag it does not need, and the hooks run as Claude Code runs them (the
command ``.claude/settings.json`` holds, through a shell, with ``.claude/settings.local.json``'s
``env`` and ``CLAUDE_PROJECT_DIR``, the event's JSON on stdin)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent


class Machine:
    """One person's machine: ``home`` and the environment their shell has."""

    def __init__(self, home: Path, name: str) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.env = {
            "PATH": f"{BIN}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "GIT_AUTHOR_NAME": name,
            "GIT_COMMITTER_NAME": name,
            "GIT_AUTHOR_EMAIL": "someone@example.org",
            "GIT_COMMITTER_EMAIL": "someone@example.org",
        }
        (home / ".gitconfig").write_text(f"[user]\n\tname = {name}\n\temail = someone@example.org\n")

    def run(self, *words: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """A command as the person types it in ``cwd`` (nothing on stdin)."""
        return subprocess.run(
            list(words),
            cwd=cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def hook(self, project: Path, event: str, payload: dict[str, Any]) -> tuple[str, float]:
        """The project's installed hook for ``event``, as Claude Code runs it: its stdout and seconds."""
        settings = json.loads((project / ".claude" / "settings.json").read_text())
        (command,) = [
            h["command"] for g in settings["hooks"][event] for h in g["hooks"] if "neural-memory-hook" in h["command"]
        ]
        local = project / ".claude" / "settings.local.json"
        env = {**self.env, **(json.loads(local.read_text()).get("env") or {}), "CLAUDE_PROJECT_DIR": str(project)}
        body = {"session_id": "s-1", "transcript_path": "", "cwd": str(project), "hook_event_name": event, **payload}
        began = time.monotonic()
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=project,
            env=env,
            input=json.dumps(body),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout, time.monotonic() - began

    @property
    def hook_log(self) -> str:
        path = self.home / ".local" / "state" / "neural-memory" / "hooks.log"
        return path.read_text() if path.exists() else ""

    def mcp_headers(self, project: Path) -> tuple[str, dict[str, str]]:
        """The URL and headers of the HTTP MCP server ``.mcp.json`` gives, ``${VAR}`` and
        ``${VAR:-default}`` filled in from the settings' env as Claude Code does."""
        entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["neural-memory"]
        local = project / ".claude" / "settings.local.json"
        env = {**self.env, **(json.loads(local.read_text()).get("env") or {})}

        def expand(text: str) -> str:
            return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: env.get(m.group(1)) or (m.group(2) or ""), text)

        return entry["url"], {name: expand(value) for name, value in entry["headers"].items()}

    def stdio_mcp(self, project: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        """The project's stdio MCP server as ``.mcp.json`` starts it (in the project, with the
        settings' env): each tool call's result, in order."""
        entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["neural-memory"]
        local = project / ".claude" / "settings.local.json"
        env = {**self.env, **(json.loads(local.read_text()).get("env") or {})}
        messages: list[dict[str, Any]] = [
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
        messages += [
            {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
            for n, (name, arguments) in enumerate(calls, 1)
        ]
        server = subprocess.Popen(
            [entry["command"], *entry["args"]],
            cwd=project,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert server.stdin is not None and server.stdout is not None
        replies: dict[int, dict[str, Any]] = {}
        try:
            for message in messages:
                server.stdin.write(json.dumps(message) + "\n")
                server.stdin.flush()
                if "id" in message:
                    while message["id"] not in replies:
                        line = server.stdout.readline()
                        assert line, f"the MCP server ended: {server.stderr.read() if server.stderr else ''}"
                        reply = json.loads(line)
                        if "id" in reply:
                            replies[int(reply["id"])] = reply
        finally:
            server.stdin.close()
            server.wait(timeout=60)
        return [replies[n]["result"] for n in range(1, len(calls) + 1)]
