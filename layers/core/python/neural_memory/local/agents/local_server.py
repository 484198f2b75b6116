"""The embedded case: hooks need a running API, and loading the model on every prompt is what the
hooks must never do. So the first hook that finds none starts one, once, in the background:
``neural-memory serve --no-demo`` on the data folder and a free loopback port, detached from the
session (it outlives it, and every later session of every project on that folder reuses it). Its
address and process id are in ``agent-server.json`` in the data folder; ``agents uninstall`` and
``agents stop`` end it. Two hooks starting at once start one server: the start holds a lock.

The server is the same ``serve`` as ``make serve`` (the same store, model and settings), so it
shares the data folder with ``neural-memory mcp`` and other processes as the README describes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import time

from neural_memory.local.agents.memory_client import healthy

SERVER_FILE = "agent-server.json"
LOCK_FILE = "agent-server.lock"
LOG_FILE = "agent-server.log"
_STARTING = "the background server is still starting (agents install starts it; this hook did not wait for it)"
RESTART_AFTER_S = 60.0  # a server that stopped soon after its start is not started again before this


class AgentServer:
    """A background server: where it listens and its process."""

    __slots__ = ("pid", "started", "url")

    def __init__(self, url: str, pid: int, started: float = 0.0) -> None:
        self.url = url
        self.pid = pid
        self.started = started  # time.time() of its start


def read_server(data_dir: str) -> AgentServer | None:
    """The background server the data folder's file names (it may have stopped since)."""
    try:
        document = json.loads(_read_text(os.path.join(data_dir, SERVER_FILE)))
        return AgentServer(str(document["url"]), int(document["pid"]), float(document.get("started", 0.0)))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def running(server: AgentServer) -> bool:
    """Whether the server's process is alive (it may still be loading)."""
    try:
        os.kill(server.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _neural_memory() -> list[str]:
    """The command that runs ``neural-memory``: the console script beside this Python, else the module."""
    script = os.path.join(os.path.dirname(sys.executable), "neural-memory")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "neural_memory.local.cli"]


def ensure_server(data_dir: str, deadline: float, start: bool = True) -> tuple[str | None, str]:
    """The URL of the data folder's background server once it answers by ``deadline`` (started
    now if none runs and ``start``), or None and why not. A capture does not start one: a capture
    still running after ``agents uninstall`` stopped the server would start it again."""
    server = read_server(data_dir)
    if server is not None and running(server):
        return _wait(server, deadline, started=False)
    if not start:
        return None, "no background server runs (a session's first hook starts it)"
    import fcntl

    os.makedirs(data_dir, mode=0o700, exist_ok=True)
    with open(os.path.join(data_dir, LOCK_FILE), "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None, "another hook is starting the background server"
        server = read_server(data_dir)  # started by the lock's previous holder?
        if server is not None and not running(server) and time.time() - server.started < RESTART_AFTER_S:
            # it stopped right after its start (a model it cannot load, a store another model built):
            # starting it again on every prompt would cost each prompt a failed start
            return None, f"the background server stopped after its start: see {LOG_FILE} in {data_dir}"
        if server is None or not running(server):
            server = _start(data_dir)
    return _wait(server, deadline, started=True)


def _start(data_dir: str) -> AgentServer:
    import subprocess

    port = _free_port()
    command = [*_neural_memory(), "serve", "--data-dir", data_dir, "--port", str(port), "--no-demo", "--quiet"]
    log = os.open(os.path.join(data_dir, LOG_FILE), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # not in the session's process group: Claude Code's exit leaves it running
            close_fds=True,
        )
    finally:
        os.close(log)
    server = AgentServer(f"http://127.0.0.1:{port}", process.pid, time.time())
    path = os.path.join(data_dir, SERVER_FILE)
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"url": server.url, "pid": server.pid, "started": server.started, "command": command}, handle)
    os.replace(path + ".tmp", path)
    return server


def _wait(server: AgentServer, deadline: float, started: bool) -> tuple[str | None, str]:
    while True:
        if healthy(server.url, timeout=max(0.05, min(1.0, deadline - time.monotonic()))):
            return server.url, "started the background server" if started else ""
        if not running(server):
            return None, f"the background server (pid {server.pid}) stopped: see {LOG_FILE} in the data folder"
        if time.monotonic() >= deadline:
            return (
                None,
                "the background server is still starting (agents install starts it; this hook did not wait)"
                if started
                else "the background server is not answering",
            )
        time.sleep(0.1)


def stop_server(data_dir: str, timeout: float = 30.0) -> str | None:
    """Stop the data folder's background server (as Ctrl-C does: it saves its index); what was done."""
    server = read_server(data_dir)
    if server is None:
        return None
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(data_dir, SERVER_FILE))
    if not running(server):
        return f"the background server (pid {server.pid}) had stopped"
    with contextlib.suppress(ProcessLookupError):
        os.kill(server.pid, signal.SIGINT)
    ends = time.monotonic() + timeout
    while running(server) and time.monotonic() < ends:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(server.pid, os.WNOHANG)
        time.sleep(0.1)
    if running(server):
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.pid, signal.SIGKILL)
        return f"killed the background server (pid {server.pid}) after {timeout:.0f} s"
    return f"stopped the background server (pid {server.pid})"
