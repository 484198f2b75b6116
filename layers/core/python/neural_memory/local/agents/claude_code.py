"""Claude Code's configuration for the memory, written into a project and taken out again
(``neural-memory agents install|uninstall|status claude-code``).

- ``.mcp.json``: the MCP server ``neural-memory``: the API's own ``/mcp`` over HTTP when it serves
  one (``type: http``, its ``Authorization`` header ``Bearer ${NM_API_KEY}``, which Claude Code
  fills in from the environment), else a local ``neural-memory mcp`` process (on the API or the
  embedded store). Teams commit it: it never holds a key.
- ``.claude/settings.json``: the hooks (``neural-memory-hook`` at ``SessionStart``,
  ``UserPromptSubmit`` and ``Stop``). Teams commit it too: no key either.
- ``.claude/settings.local.json``: ``env.NM_API_KEY``, the key (given with ``--key``, or for the
  embedded store a key issued for the workspace), which Claude Code passes to the hooks and the MCP
  server. It is kept out of git (``.git/info/exclude``). Without ``--key`` on an API, the key is
  ``NM_API_KEY`` from the environment Claude Code starts in.

Each file is merged with what it holds (other servers, hooks, permissions stay as they are);
installing twice changes nothing the second time; uninstalling removes exactly the entries install
wrote (a file left empty is removed), each file kept in its own formatting (``json_files``).

The committed files hold no path of this machine: the commands are ``neural-memory`` and
``neural-memory-hook`` as ``PATH`` resolves them, and without ``--url`` or ``--data-dir`` they find
the repository's own memory at run time (``repository_memory``); a data folder given with
``--data-dir`` goes into ``settings.local.json`` (``NM_DATA_DIR``, ``NM_WORKSPACE``). A teammate's
install on the committed files (``--key`` only) reads the shared API's URL from them and writes
``settings.local.json`` alone."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neural_memory.local.agents.hook_settings import HOOK_EVENTS, is_our_hook, with_our_hooks, without_our_hooks
from neural_memory.local.agents.hook_state import LOG_FILE, state_dir
from neural_memory.local.agents.json_files import read_object as _read
from neural_memory.local.agents.json_files import write_object
from neural_memory.local.agents.repository_memory import exclude_from_git, repository_memory

SERVER_NAME = "neural-memory"
KEY_VARIABLE = "NM_API_KEY"
DATA_DIR_VARIABLE = "NM_DATA_DIR"
WORKSPACE_VARIABLE = "NM_WORKSPACE"
USER_VARIABLE = "NM_AGENT_USER"  # who the session's captured prompts and remembered decisions are by
REPOSITORY_HEADER = "X-Neural-Memory-Repository"
ACTOR_HEADER = "X-Neural-Memory-Actor"
MCP_FILE = ".mcp.json"
SETTINGS_FILE = ".claude/settings.json"
LOCAL_SETTINGS_FILE = ".claude/settings.local.json"
MCP_PATH = "/mcp"
# Claude Code expands ${VAR} in .mcp.json from its environment, settings.local.json's env included.
AUTHORIZATION = f"Bearer ${{{KEY_VARIABLE}}}"
ACTOR = f"${{{USER_VARIABLE}:-}}"


@dataclass(frozen=True)
class Target:
    """Where the memory is: a running API (``url``; ``http_mcp``: its own ``/mcp`` serves the agent's
    tools), or the embedded store: the repository's own memory (``data_dir`` None, found at run
    time), or the folder and workspace given (``data_dir``, ``workspace``: this machine's, kept in
    ``settings.local.json``). ``repository``: owner/name, which ``/mcp`` is told."""

    url: str | None = None
    data_dir: Path | None = None
    workspace: str | None = None
    http_mcp: bool = False
    repository: str | None = None

    def mcp_entry(self) -> dict[str, Any]:
        """The MCP server's entry in ``.mcp.json``: the API's ``/mcp``, or a local process."""
        if self.url and self.http_mcp:
            headers = {"Authorization": AUTHORIZATION}
            if self.repository:
                headers |= {REPOSITORY_HEADER: self.repository, ACTOR_HEADER: ACTOR}
            return {"type": "http", "url": self.url + MCP_PATH, "headers": headers}
        return {"command": "neural-memory", "args": self.mcp_args()}

    def mcp_args(self) -> list[str]:
        return ["mcp", "--url", self.url] if self.url else ["mcp"]

    def hook_args(self) -> list[str]:
        return ["--url", self.url] if self.url else []


@dataclass
class Changes:
    """What an install or uninstall did, file by file (``created``, ``updated``, ``unchanged``,
    ``removed``), and notes (a key issued, a server stopped)."""

    files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"{what:9} {name}" for name, what in self.files.items()] + self.notes


def _write(path: Path, before: dict[str, Any] | None, after: dict[str, Any], private: bool = False) -> str:
    return write_object(path, before, after, private)


def _unwrite(path: Path, before: dict[str, Any] | None, after: dict[str, Any], private: bool = False) -> str:
    return write_object(path, before, after, private, installing=False)


EXCLUDE_MARK = "# neural-memory agents install: the hooks' key stays out of git"


def _exclude_from_git(project: Path, remove: bool = False) -> bool:
    """Keep ``.claude/settings.local.json`` (the key) out of git, or stop doing so."""
    return exclude_from_git(project, "/" + LOCAL_SETTINGS_FILE, EXCLUDE_MARK, remove)


def install(project: Path, target: Target, key: str | None, budget_tokens: int | None = None) -> Changes:
    """Write the MCP server, the hooks and (given one) the key into ``project`` (the module's docstring)."""
    changes = Changes()
    mcp_path = project / MCP_FILE
    before = _read(mcp_path)
    servers = dict((before or {}).get("mcpServers") or {})
    servers[SERVER_NAME] = target.mcp_entry()
    changes.files[MCP_FILE] = _write(mcp_path, before, {**(before or {}), "mcpServers": servers})

    settings_path = project / SETTINGS_FILE
    before = _read(settings_path)
    changes.files[SETTINGS_FILE] = _write(settings_path, before, with_our_hooks(before or {}, target, budget_tokens))

    local_path = project / LOCAL_SETTINGS_FILE
    before = _read(local_path)
    env = dict((before or {}).get("env") or {})
    if target.url is None:
        data_dir, workspace = embedded_memory(project, target)
        key, note = _embedded_key(data_dir, workspace, env.get(KEY_VARIABLE))
        if note:
            changes.notes.append(note)
        if target.data_dir is not None:  # this machine's folder: never in a committed file
            env |= {DATA_DIR_VARIABLE: str(data_dir), WORKSPACE_VARIABLE: workspace}
    if key:
        env[KEY_VARIABLE] = key
    if user := git_user(project):
        env[USER_VARIABLE] = user
    if env != ((before or {}).get("env") or {}):
        changes.files[LOCAL_SETTINGS_FILE] = _write(local_path, before, {**(before or {}), "env": env}, private=True)
    if env and _exclude_from_git(project):
        changes.notes.append(f"added /{LOCAL_SETTINGS_FILE} to .git/info/exclude (the key stays out of git)")
    if not key:
        changes.notes.append(f"no key written: the hooks and the MCP server read {KEY_VARIABLE} from the environment")
    return changes


def embedded_memory(project: Path, target: Target) -> tuple[Path, str]:
    """The data folder and workspace of an embedded target: the ones given, else the repository's
    own memory (marked, so the CLI finds it too)."""
    if target.data_dir is not None and target.workspace:
        return target.data_dir, target.workspace
    memory = repository_memory(project)
    if memory is None:
        raise ValueError(f"{project} is in no git repository: give --data-dir and --workspace, or --url")
    memory.mark()
    return memory.data_dir, memory.workspace


def git_user(project: Path) -> str:
    """The person working in ``project``: git's ``user.name`` (else ``user.email``), "" when unset
    or outside a repository."""
    from neural_memory.local.agents.repository import work_tree_root

    if work_tree_root(project) is None:
        return ""
    for setting in ("user.name", "user.email"):
        try:
            done = subprocess.run(
                ["git", "-C", str(project), "config", setting], capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return ""
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    return ""


def _embedded_key(data_dir: Path, workspace: str, current: str | None) -> tuple[str, str]:
    """The key the embedded workspace's hooks use: the one installed already if it is still valid
    for that workspace in that data folder, else a new one."""
    from neural_memory.auth.factory import build_key_store
    from neural_memory.auth.keys import identify, issue_key
    from neural_memory.clock import utcnow
    from neural_memory.errors import Unauthorized
    from neural_memory.settings import Settings

    store = build_key_store(Settings(data_dir=data_dir))
    if current:
        try:
            if identify(store, current).workspace_id == workspace:
                return current, ""
        except Unauthorized:
            pass
    key = issue_key(store, workspace, utcnow())
    return key, f"issued a key for workspace {workspace!r} in {data_dir} (in {LOCAL_SETTINGS_FILE})"


def installed_target(project: Path) -> Target | None:
    """Where the installed MCP server points (None when it is not installed): the shared API the
    committed files name, or the embedded memory (the folder ``settings.local.json`` names, else
    the repository's own)."""
    try:
        entry = ((_read(project / MCP_FILE) or {}).get("mcpServers") or {}).get(SERVER_NAME)
        env = (_read(project / LOCAL_SETTINGS_FILE) or {}).get("env") or {}
    except ValueError:
        return None
    if isinstance(entry, dict) and entry.get("type") == "http" and isinstance(entry.get("url"), str):
        repository = (entry.get("headers") or {}).get(REPOSITORY_HEADER)
        return Target(url=entry["url"].removesuffix(MCP_PATH), http_mcp=True, repository=repository)
    args = entry.get("args") if isinstance(entry, dict) else None
    if not isinstance(args, list):
        return None

    def flag(name: str) -> str | None:
        return str(args[args.index(name) + 1]) if name in args[:-1] else None

    if url := flag("--url"):
        return Target(url=url)
    data_dir = flag("--data-dir") or env.get(DATA_DIR_VARIABLE)  # an earlier version's install wrote flags
    workspace = flag("--workspace") or env.get(WORKSPACE_VARIABLE)
    if data_dir and workspace:
        return Target(data_dir=Path(data_dir), workspace=str(workspace))
    memory = repository_memory(project)
    return Target(data_dir=memory.data_dir, workspace=memory.workspace) if memory is not None else Target()


def uninstall(project: Path) -> Changes:
    """Remove what ``install`` wrote (and, for the embedded store, revoke its key and stop the
    background server)."""
    changes = Changes()
    target = installed_target(project)
    mcp_path = project / MCP_FILE
    before = _read(mcp_path)
    if before is not None:
        servers = {k: v for k, v in (before.get("mcpServers") or {}).items() if k != SERVER_NAME}
        after = {k: servers if k == "mcpServers" else v for k, v in before.items() if k != "mcpServers" or servers}
        changes.files[MCP_FILE] = _unwrite(mcp_path, before, after)

    settings_path = project / SETTINGS_FILE
    before = _read(settings_path)
    if before is not None:
        changes.files[SETTINGS_FILE] = _unwrite(settings_path, before, without_our_hooks(before))

    local_path = project / LOCAL_SETTINGS_FILE
    before = _read(local_path)
    if before is not None:
        env = dict(before.get("env") or {})
        key = env.pop(KEY_VARIABLE, None)
        for ours in (DATA_DIR_VARIABLE, WORKSPACE_VARIABLE, USER_VARIABLE):
            env.pop(ours, None)
        after = {k: env if k == "env" else v for k, v in before.items() if k != "env" or env}
        changes.files[LOCAL_SETTINGS_FILE] = _unwrite(local_path, before, after, private=True)
        if target is not None and target.data_dir is not None and key:
            changes.notes.append(_revoke(target.data_dir, key))
    if _exclude_from_git(project, remove=True):
        changes.notes.append(f"removed /{LOCAL_SETTINGS_FILE} from .git/info/exclude")
    claude_folder = project / ".claude"
    if claude_folder.is_dir() and not any(claude_folder.iterdir()):
        claude_folder.rmdir()
    if target is not None and target.data_dir is not None:
        from neural_memory.local.agents.local_server import stop_server

        if stopped := stop_server(str(target.data_dir)):
            changes.notes.append(stopped)
    return changes


def _revoke(data_dir: Path, key: str) -> str:
    from neural_memory.auth.factory import build_key_store
    from neural_memory.auth.keys import revoke
    from neural_memory.clock import utcnow
    from neural_memory.settings import Settings

    revoked = revoke(build_key_store(Settings(data_dir=data_dir)), key, utcnow())
    return f"revoked the hooks' key in {data_dir}" if revoked else f"the hooks' key was not valid in {data_dir}"


def status(project: Path, environment_key: str | None) -> tuple[bool, list[str]]:
    """Whether everything is installed and the memory answers, and a line per part saying so."""
    import time

    from neural_memory.local.agents.memory_client import MemoryApi, MemoryUnavailable

    lines = [f"Claude Code in {project}:"]
    target = installed_target(project)
    try:
        settings = _read(project / SETTINGS_FILE) or {}
        local = _read(project / LOCAL_SETTINGS_FILE) or {}
    except ValueError as exc:
        return False, [*lines, f"  unreadable: {exc}"]
    events = [
        event
        for event, groups in (settings.get("hooks") or {}).items()
        if any(is_our_hook(h) for g in groups or [] if isinstance(g, dict) for h in g.get("hooks") or [])
    ]
    where = ""
    if target is not None and target.url:
        where = f"{target.url}{MCP_PATH} (HTTP, Authorization from {KEY_VARIABLE})" if target.http_mcp else target.url
    elif target is not None:
        where = f"embedded store {target.data_dir}, workspace {target.workspace}"
    lines.append(f"  MCP server: {'in ' + MCP_FILE + ' -> ' + where if target else 'not installed'}")
    lines.append(f"  hooks: {', '.join(events) + ' in ' + SETTINGS_FILE if events else 'not installed'}")
    key = (local.get("env") or {}).get(KEY_VARIABLE)
    source = LOCAL_SETTINGS_FILE if key else ("the environment" if environment_key else None)
    key = key or environment_key
    lines.append(f"  key: {KEY_VARIABLE} from {source}" if source else f"  key: none ({KEY_VARIABLE} is not set)")
    answers = False
    if target is not None and key:
        url = target.url
        if target.data_dir is not None:
            from neural_memory.local.agents.local_server import read_server, running

            server = read_server(str(target.data_dir))
            if server is not None and running(server):
                url = server.url
                lines.append(f"  background server: pid {server.pid} on {server.url}")
            else:
                lines.append("  background server: not running (the next session's first hook starts it)")
        if url:
            try:
                facets = MemoryApi(url, key, time.monotonic() + 5).facets()
                answers = True
                lines.append(f"  memory: answers at {url} ({facets.get('total', '?')} observations in the workspace)")
                if target.http_mcp:
                    served = MemoryApi(url, key, time.monotonic() + 5).mcp_handshake()
                    lines.append(f"  MCP: answers at {url}{MCP_PATH} (protocol {served['protocolVersion']})")
            except MemoryUnavailable as exc:
                answers = False
                lines.append(f"  memory: does not answer: {exc.reason}")
        else:
            answers = _embedded_key_valid(target, key, lines)
    log = os.path.join(state_dir(), LOG_FILE)
    lines.append(f"  hook log: {log}")
    return bool(target and len(events) == len(HOOK_EVENTS) and answers), lines


def _embedded_key_valid(target: Target, key: str, lines: list[str]) -> bool:
    from neural_memory.auth.factory import build_key_store
    from neural_memory.auth.keys import identify
    from neural_memory.errors import Unauthorized
    from neural_memory.settings import Settings

    assert target.data_dir is not None
    try:
        workspace = identify(build_key_store(Settings(data_dir=target.data_dir)), key).workspace_id
    except Unauthorized:
        lines.append(f"  memory: the key is not valid in {target.data_dir}")
        return False
    lines.append(f"  memory: the key opens workspace {workspace!r} in {target.data_dir}")
    return True
