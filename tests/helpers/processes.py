"""Real processes on one data folder, for tests at the process boundary (issue 22): the CLI as a
subprocess, writers that post batches in a loop (to a running API over HTTP, or straight into a
data folder through their own ``neural-memory mcp`` over stdio) and report every id whose write
was acknowledged, an agent's MCP session driven synchronously, and a watch on the store's -wal and
-shm files. Files of the store are only ever looked at with ``stat`` while processes hold them.

A writer is this module run as a program (``python -m tests.helpers.processes http|mcp ...``); it
prints one JSON line per event on stdout: ``{"begin": n, "word": w, "ids": [...]}`` before a batch,
``{"ack": n, "word": w, "ids": [...]}`` after a 2xx reply or a successful tool result (flushed, so
a line printed is an acknowledgement made, even if the writer is killed a moment later), and
``{"error": n, "status": s, "reply": ...}`` for anything else."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from mcp import Client
    from mcp_types import CallToolResult

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # the venv's bin: `neural-memory` is installed there
CLI = [sys.executable, "-m", "neural_memory.local.cli"]
DATABASE = "neural-memory.sqlite3"
WORKSPACE = "demo"  # the demo key's workspace, which `ingest` and these writers use by default
BROKEN = ("Traceback", "disk I/O error", "database disk image is malformed", "internal_error")

# Words for note content: notes of one batch must not look alike to the model (search collapses
# vectors at cosine >= 0.97 into one result), so each note draws its own handful.
VOCABULARY = (
    "deploy rollback cache schema migration index queue worker billing invoice latency alarm "
    "dashboard tenant region replica backup restore token session cookie header proxy gateway "
    "lambda bucket retention archive audit policy role secret rotation certificate domain vendor "
    "pricing contract release branch review pipeline runner docker image kernel memory thread "
    "socket timeout retry budget quota throttle shard partition compaction vacuum checkpoint "
    "journal ledger payment refund customer onboarding email webhook signature cron report chart"
).split()


def cli(*args: str, stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``neural-memory ARGS`` as a user types it, to completion."""
    return subprocess.run([*CLI, *args], input=stdin, capture_output=True, text=True, timeout=timeout, check=False)


def start_cli(*args: str) -> subprocess.Popen[str]:
    """``neural-memory ARGS`` started in the background (stdout and stderr together)."""
    return subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def broken(log: str) -> list[str]:
    """The lines of a process's output that say something broke (a traceback, an I/O error, a 500)."""
    return [line for line in log.splitlines() if any(sign in line for sign in BROKEN)]


def call(url: str, key: str, method: str, path: str, body: Any = None, timeout: float = 60) -> tuple[int, Any]:
    """One request to a running API with a key: the status and the decoded reply (0 if unreachable)."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    request = urllib.request.Request(url + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:  # loopback only
            return int(reply.status), json.loads(reply.read() or b"{}")
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            return error.code, json.loads(raw or b"{}")
        except ValueError:
            return error.code, raw.decode(errors="replace")
    except (urllib.error.URLError, OSError) as error:
        return 0, str(error)


def batch_word(name: str, n: int) -> str:
    """A word found in every note of batch ``n`` of writer ``name`` and nowhere else."""
    return f"{name}b{n:04d}q{random.randrange(36**4):04x}"  # not a secret: a word to search by


def notes(word: str, size: int, observation_type: str = "note") -> list[dict[str, Any]]:
    """``size`` observations in the API's request shape, ids ``{word}-{i}``: each holds the batch's
    word and its own (``{word}n{i}``), amid words of its own."""
    made = []
    for i in range(size):
        words = " ".join(random.sample(VOCABULARY, 8))
        content = f"{word} {word}n{i}: {words}."
        made.append({
            "id": f"{word}-{i}", "source": "manual", "observationType": observation_type,
            "occurredAt": "2026-01-15T10:00:00Z", "title": f"{word} note {i}", "content": content,
        })  # fmt: skip
    return made


def agent_notes(word: str, size: int) -> list[dict[str, Any]]:
    """The same notes as an agent gives the ``remember`` tool (no source or time: the defaults)."""
    return [{k: note[k] for k in ("id", "title", "content", "observationType")} for note in notes(word, size)]


def integrity(database: Path) -> str:
    """``PRAGMA integrity_check`` of a database no process holds any more, read only."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        return "\n".join(str(row[0]) for row in conn.execute("PRAGMA integrity_check"))


def children(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux: /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


# --- the store's files, watched by name only -------------------------------------------------------


@dataclass
class FileWatch:
    """What a watch on the store's -wal and -shm files saw: how often it looked, when one was
    missing, and any mode open to others."""

    looks: int = 0
    missing: list[str] = field(default_factory=list)
    loose: list[str] = field(default_factory=list)


@contextlib.contextmanager
def watch_store_files(data_dir: Path, every_s: float = 0.02) -> Iterator[FileWatch]:
    """Look at ``neural-memory.sqlite3-wal`` and ``-shm`` (``stat`` only: never a descriptor) every
    ``every_s`` while the block runs: it should run only while some process holds the database."""
    seen = FileWatch()
    stop = threading.Event()
    start = time.monotonic()

    def look() -> None:
        while not stop.is_set():
            for suffix in ("-wal", "-shm"):
                try:
                    mode = (data_dir / f"{DATABASE}{suffix}").stat().st_mode
                except FileNotFoundError:
                    seen.missing.append(f"{suffix} missing at {time.monotonic() - start:.2f} s")
                    continue
                if stat.S_IMODE(mode) & 0o077:
                    seen.loose.append(f"{suffix} mode {stat.S_IMODE(mode):o}")
            seen.looks += 1
            stop.wait(every_s)

    thread = threading.Thread(target=look, name="store-file-watch", daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join()


# --- writers -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriterSpec:
    """One writer: ``http`` posts batches to ``url`` with ``key``; ``mcp`` starts its own
    ``neural-memory mcp --data-dir DATA_DIR --workspace WORKSPACE`` and remembers batches."""

    name: str  # lowercase letters: it starts every batch word, so every id, of this writer
    kind: str
    url: str = ""
    key: str = ""
    data_dir: Path | None = None
    workspace: str = WORKSPACE
    batch: int = 10
    pause_s: float = 0.05
    seconds: float | None = None  # how long this one writes, if not the run's (a writer to be killed: longer)


def http_writer(name: str, url: str, key: str, batch: int = 10, pause_s: float = 0.05) -> WriterSpec:
    return WriterSpec(name, "http", url=url, key=key, batch=batch, pause_s=pause_s)


def mcp_writer(
    name: str, data_dir: Path, workspace: str = WORKSPACE, batch: int = 10, seconds: float | None = None
) -> WriterSpec:
    return WriterSpec(name, "mcp", data_dir=data_dir, workspace=workspace, batch=batch, seconds=seconds)


@dataclass
class Writer:
    """A running writer process and what it printed so far."""

    spec: WriterSpec
    process: subprocess.Popen[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    killed: bool = False
    changed: threading.Condition = field(default_factory=threading.Condition)

    @property
    def acknowledged(self) -> dict[str, list[str]]:
        """Batch word → ids, for every batch acknowledged."""
        return {event["word"]: event["ids"] for event in self.events if "ack" in event}

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [event for event in self.events if "error" in event]

    def output(self) -> str:
        """What it (and the ``mcp`` server it drives) wrote on stderr."""
        return "\n".join(self.log)

    def kill(self) -> None:
        """SIGKILL it and the processes it started (an ``mcp`` writer's server: the process that
        holds the database): no clean-up of any kind runs."""
        for pid in [*children(self.process.pid), self.process.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.killed = True


@dataclass
class WritersRun:
    """Writers started together; ``kill_mid_batch`` one of them, ``stop`` them early, read the
    rest when they end."""

    writers: dict[str, Writer]
    stop_file: Path

    def stop(self) -> None:
        """Ask every writer to finish the batch it is on and write no more (before its time is up)."""
        self.stop_file.touch()

    @property
    def acknowledged(self) -> dict[str, list[str]]:
        """Batch word → acknowledged ids, over every writer (a killed one's until it died)."""
        return {word: ids for writer in self.writers.values() for word, ids in writer.acknowledged.items()}

    @property
    def ids(self) -> list[str]:
        """Every acknowledged id, over every writer."""
        return [observation for ids in self.acknowledged.values() for observation in ids]

    @property
    def errors(self) -> dict[str, list[dict[str, Any]]]:
        """Writer name → its replies other than a success (none, if all is well)."""
        return {name: writer.errors for name, writer in self.writers.items() if writer.errors}

    def wait_for_acks(self, name: str, count: int, timeout_s: float = 120) -> None:
        """Until writer ``name`` has ``count`` acknowledged batches (it has started and works)."""
        writer = self.writers[name]
        with writer.changed:
            ok = writer.changed.wait_for(
                lambda: len(writer.acknowledged) >= count or writer.process.poll() is not None, timeout_s
            )
        assert ok and len(writer.acknowledged) >= count, f"{name} wrote no batch:\n{writer.output()[-3000:]}"

    def kill_mid_batch(self, name: str, delay_s: float = 0.05, timeout_s: float = 60) -> None:
        """SIGKILL writer ``name`` (and the ``mcp`` server it drives: the process holding the
        database) ``delay_s`` after it began a batch, before that batch is answered."""
        writer = self.writers[name]
        for _ in range(20):  # a batch may be answered within the delay: then wait for the next one
            with writer.changed:
                began = writer.changed.wait_for(lambda: _begun_unanswered(writer.events), timeout_s)
                assert began, f"{name} began no batch:\n{writer.output()[-3000:]}"
                batches = len(writer.events)
            time.sleep(delay_s)
            with writer.changed:
                if len(writer.events) == batches:  # still unanswered: kill it now, mid-batch
                    if writer.spec.kind == "mcp":
                        assert children(writer.process.pid), f"{name}: no mcp server process to kill"
                    writer.kill()
                    return
        raise AssertionError(f"{name}: every batch was answered within {delay_s} s; no kill mid-batch")


def _begun_unanswered(events: list[dict[str, Any]]) -> bool:
    return bool(events) and "begin" in events[-1]


def _read(writer: Writer, stream: IO[str], into_events: bool) -> None:
    for line in stream:
        with writer.changed:
            if into_events and line.startswith("{"):
                writer.events.append(json.loads(line))
            else:
                writer.log.append(line.rstrip("\n"))
            writer.changed.notify_all()


@contextlib.contextmanager
def writers(specs: Sequence[WriterSpec], seconds: float) -> Iterator[WritersRun]:
    """Start a writer process per spec, each writing batches in a loop for ``seconds`` (or until
    ``stop``); on exit wait for them all to finish (any killed one is over already) and keep what
    each printed."""
    running: dict[str, Writer] = {}
    stop_file = Path(tempfile.mkdtemp(prefix="nm-writers-")) / "stop"
    threads: list[threading.Thread] = []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    try:
        for spec in specs:
            command = [
                sys.executable,
                "-m",
                "tests.helpers.processes",
                spec.kind,
                spec.name,
                str(spec.seconds or seconds),
            ]
            command += ["--batch", str(spec.batch), "--pause", str(spec.pause_s), "--workspace", spec.workspace]
            command += ["--stop-file", str(stop_file)]
            command += ["--url", spec.url] if spec.url else []
            command += ["--data-dir", str(spec.data_dir)] if spec.data_dir else []
            process = subprocess.Popen(
                command, cwd=ROOT, env={**env, "NM_TEST_WRITER_KEY": spec.key}, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip
            writer = running[spec.name] = Writer(spec, process)
            assert process.stdout is not None and process.stderr is not None
            for stream, into_events in ((process.stdout, True), (process.stderr, False)):
                thread = threading.Thread(target=_read, args=(writer, stream, into_events), daemon=True)
                thread.start()
                threads.append(thread)
        yield WritersRun(running, stop_file)
    except BaseException:
        for writer in running.values():  # the test failed: no writer outlives it on the folder
            writer.kill()
        raise
    finally:
        for writer in running.values():
            try:
                writer.process.wait(timeout=seconds + 120)
            except subprocess.TimeoutExpired:
                writer.process.kill()
                writer.process.wait()
        for thread in threads:
            thread.join(timeout=10)
        shutil.rmtree(stop_file.parent, ignore_errors=True)


# --- an agent's MCP session, driven synchronously ---------------------------------------------------


@dataclass
class McpAgent:
    """An MCP client session over stdio to ``neural-memory mcp``; ``call`` a tool and wait."""

    client: Client
    portal: Any  # anyio's BlockingPortal

    def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        result: CallToolResult = self.portal.call(self.client.call_tool, tool, arguments)
        return result


@contextlib.contextmanager
def mcp_agent(data_dir: Path, workspace: str, errlog: Path) -> Iterator[McpAgent]:
    """``neural-memory mcp --data-dir DATA_DIR --workspace WORKSPACE`` started over stdio by the
    ``mcp`` SDK's client, as an agent starts it; its stderr goes to ``errlog``."""
    from anyio.from_thread import start_blocking_portal
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    path = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    server = StdioServerParameters(
        command="neural-memory",
        args=["mcp", "--data-dir", str(data_dir), "--workspace", workspace, "--structured-content"],
        env={**os.environ, "PATH": path},
    )  # fmt: skip
    with errlog.open("w") as log, start_blocking_portal() as portal:
        client = Client(stdio_client(server, errlog=log))
        with portal.wrap_async_context_manager(client) as connected:
            yield McpAgent(connected, portal)


# --- the writer program ----------------------------------------------------------------------------------


def _emit(event: dict[str, Any]) -> None:
    print(json.dumps(event), flush=True)


def _writing(deadline: float, stop_file: str) -> bool:
    return time.monotonic() < deadline and not (stop_file and os.path.exists(stop_file))


def _write_http(args: argparse.Namespace) -> None:
    key = os.environ["NM_TEST_WRITER_KEY"]
    deadline = time.monotonic() + args.seconds
    n = 0
    while _writing(deadline, args.stop_file):
        word = batch_word(args.name, n)
        batch = notes(word, args.batch)
        _emit({"begin": n, "word": word, "ids": [note["id"] for note in batch]})
        status, reply = call(args.url, key, "POST", "/v1/observations", {"observations": batch})
        if 200 <= status < 300:
            _emit({"ack": n, "word": word, "ids": reply["ids"]})
        else:
            _emit({"error": n, "word": word, "status": status, "reply": reply})
        n += 1
        time.sleep(args.pause)


async def _write_mcp(args: argparse.Namespace) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    path = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    command = ["mcp", "--data-dir", args.data_dir, "--workspace", args.workspace, "--structured-content"]
    server = StdioServerParameters(command="neural-memory", args=command, env={**os.environ, "PATH": path})
    async with Client(server) as agent:
        deadline = time.monotonic() + args.seconds
        n = 0
        while _writing(deadline, args.stop_file):
            word = batch_word(args.name, n)
            batch = agent_notes(word, args.batch)
            _emit({"begin": n, "word": word, "ids": [note["id"] for note in batch]})
            result = await agent.call_tool("remember", {"observations": batch})
            if result.is_error or result.structured_content is None:
                text = " ".join(getattr(block, "text", "") for block in result.content)
                _emit({"error": n, "word": word, "status": "tool error", "reply": text})
            else:
                _emit({"ack": n, "word": word, "ids": result.structured_content["ids"]})
            n += 1
            time.sleep(args.pause)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.helpers.processes", description="a writer in a loop")
    parser.add_argument("kind", choices=["http", "mcp"])
    parser.add_argument("name")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--pause", type=float, default=0.05)
    parser.add_argument("--url", default="")
    parser.add_argument("--data-dir", default="")
    parser.add_argument("--workspace", default=WORKSPACE)
    parser.add_argument("--stop-file", default="", help="write no more batches once this file exists")
    args = parser.parse_args(argv)
    if args.kind == "http":
        _write_http(args)
    else:
        import anyio

        anyio.run(_write_mcp, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
