"""What Claude Code's hooks cost the agent per prompt: ``neural-memory-hook`` run as Claude Code
runs it (a new process per event, the event's JSON on stdin), timed from start to exit.

    python -m bench.agent_hooks [--prompts 50] [--data-dir DIR]

Two cases, on a fresh data folder holding the demo's samples (``events/``):

1. warm server: ``neural-memory serve`` already running; the hooks installed with ``--url``.
2. embedded: the same data folder with that server stopped, the hooks on ``--data-dir``; the first
   ``SessionStart`` finds no server and starts the background one (timed apart: once per data
   folder), then every prompt reuses it.

For each, after five untimed prompts: ``UserPromptSubmit`` over ``--prompts`` prompts
(engineering questions about the samples and unrelated ones, so both a recall and a recall of
nothing are timed), p50 and p95 of the wall time and how many injected something; ``Stop`` (the
capture, which returns at once and carries on detached) p50 and p95; ``SessionStart`` (the
brief). The target: ``UserPromptSubmit`` p95 <= 300 ms warm. A bare ``python -c pass`` is timed
first, in the same run: the floor any hook has on the machine as loaded as it is. The hook
processes run with bytecode written, as a user's Python does (the package is compiled first),
and without ``PYTHONDONTWRITEBYTECODE``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import neural_memory.agents

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
HOOK = BIN / "neural-memory-hook"
TOOK = re.compile(r" (\d+)ms(?: |$)")  # a hooks.log line's time, from the hook's main() to its log line
WARMUP = 5  # prompts sent before the timed ones, in each case
SUBJECTS = [
    "session refresh in the edge middleware",
    "the auth redirect loop",
    "why the console deploy failed",
    "NEXT_PUBLIC_API_URL and the API base URL",
    "the flaky login end-to-end test",
    "release v2.14.0",
    "src/auth/middleware.ts",
    "the deploy environment variables",
    "dependabot bumping next",
    "who reviews pull requests to the console",
]
UNRELATED = [
    "rename this variable to something clearer",
    "write a haiku about autumn leaves",
    "what is the time complexity of heapsort",
    "add type hints to this function",
    "explain the difference between TCP and UDP",
]


def prompts(count: int) -> list[str]:
    """``count`` prompts: questions about the samples' subjects, and every fourth one unrelated."""
    forms = [
        "Why did we change {}?",
        "What do we know about {}?",
        "Remind me of the decision on {}.",
        "{}: any history?",
    ]
    found = []
    for n in range(count):
        if n % 4 == 3:
            found.append(UNRELATED[n % len(UNRELATED)])
        else:
            found.append(forms[n % len(forms)].format(SUBJECTS[n % len(SUBJECTS)]))
    return found


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def run_hook(flags: list[str], payload: dict[str, Any], env: dict[str, str]) -> tuple[float, str]:
    """One hook run: milliseconds from start to exit, and what it printed."""
    began = time.perf_counter()
    done = subprocess.run(
        [str(HOOK), *flags], input=json.dumps(payload).encode(), capture_output=True, env=env, check=False
    )
    return (time.perf_counter() - began) * 1000, done.stdout.decode()


def start_serve(data_dir: Path, port: int, *flags: str) -> subprocess.Popen[bytes]:
    """``neural-memory serve`` on ``data_dir`` (and ``flags``), once it answers."""
    command = [str(BIN / "neural-memory"), "serve", "--data-dir", str(data_dir), "--port", str(port), "--quiet", *flags]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):  # loopback only
                return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise SystemExit("serve did not start")


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def measure(name: str, flags: list[str], env: dict[str, str], project: Path, count: int) -> dict[str, Any]:
    """The hooks' times over ``count`` prompts, one session."""
    session = f"bench-{name}"
    event = {"session_id": session, "cwd": str(project), "transcript_path": ""}
    start_ms, _ = run_hook(flags, {**event, "hook_event_name": "SessionStart", "source": "startup"}, env)
    for prompt in prompts(WARMUP):  # the server's first searches (its caches, the page cache) are not the steady state
        run_hook([*flags, "--timeout", "2.0"], {**event, "hook_event_name": "UserPromptSubmit", "prompt": prompt}, env)
    recall, capture, injected = [], [], 0
    for n, prompt in enumerate(prompts(count)):
        turn = {**event, "prompt_id": f"p-{n}"}
        took, out = run_hook(
            [*flags, "--timeout", "2.0"], {**turn, "hook_event_name": "UserPromptSubmit", "prompt": prompt}, env
        )
        recall.append(took)
        injected += bool(out.strip())
        took, _ = run_hook(flags, {**turn, "hook_event_name": "Stop", "last_assistant_message": f"Answer {n}."}, env)
        capture.append(took)
    log = (Path(env["NM_HOOK_STATE_DIR"]) / "hooks.log").read_text().splitlines()
    logged = [
        float(m.group(1)) for line in log if f"UserPromptSubmit session={session} " in line if (m := TOOK.search(line))
    ]
    logged = logged[-count:]
    return {
        "case": name,
        "afterStart": {"p50": round(percentile(logged, 0.5)), "p95": round(percentile(logged, 0.95))},
        "prompts": count,
        "injected": injected,
        "userPromptSubmit": {"p50": round(percentile(recall, 0.5)), "p95": round(percentile(recall, 0.95))},
        "stop": {"p50": round(percentile(capture, 0.5)), "p95": round(percentile(capture, 0.95))},
        "sessionStart": round(start_ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=50)
    parser.add_argument("--data-dir", help="a folder for the two data folders (default: a temporary one, removed)")
    args = parser.parse_args()
    compileall.compile_dir(str(Path(neural_memory.agents.__file__).parent), quiet=1)
    base = Path(args.data_dir or tempfile.mkdtemp(prefix="bench-hooks-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NM_HOOK_STATE_DIR"] = str(base / "state")
    project = ROOT  # a git clone: the hook reads its repository and branch
    # What any Python process costs on this machine now (the hook's floor; a loaded machine raises it)
    bare: list[float] = []
    for _ in range(args.prompts):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
        bare.append((time.perf_counter() - began) * 1000)
    results: list[dict[str, Any]] = []
    served = None
    try:
        # 1. a warm server, the hooks on --url
        port = free_port()
        served = start_serve(base / "served", port)
        key = (base / "served" / "demo-api-key").read_text().strip()
        warm = measure(
            "warm server", ["--url", f"http://127.0.0.1:{port}"], {**env, "NM_API_KEY": key}, project, args.prompts
        )
        results.append(warm)
        served.send_signal(signal.SIGINT)
        served.wait(60)
        served = None

        # 2. embedded: the same data folder, its server stopped; the hooks start their own on it
        embedded = base / "served"
        flags = ["--data-dir", str(embedded), "--workspace", "demo"]
        embedded_env = {**env, "NM_API_KEY": key}
        first_ms, out = run_hook(
            flags, {"session_id": "bench-first", "cwd": str(project), "hook_event_name": "SessionStart"}, embedded_env
        )
        result = measure("embedded", flags, embedded_env, project, args.prompts)
        result["firstSessionStart"] = round(first_ms)  # starts the background server, waits for it
        results.append(result)
    finally:
        # the last captures' detached processes deliver after their hooks returned: let them end
        # before their server stops (and their data folder goes)
        ends = time.monotonic() + 120
        log = Path(env["NM_HOOK_STATE_DIR"]) / "hooks.log"
        while time.monotonic() < ends:
            lines = log.read_text().splitlines() if log.exists() else []
            sent = sum(" capture sent " in line for line in lines)
            if sent <= sum(" captured " in line or " capture held " in line for line in lines):
                break
            time.sleep(0.5)
        if served is not None:
            served.kill()
        from neural_memory.agents.local_server import stop_server

        stop_server(str(base / "served"))
        if not args.data_dir:
            shutil.rmtree(base, ignore_errors=True)
    print(f"python -c pass  p50 {percentile(bare, 0.5):.0f} ms, p95 {percentile(bare, 0.95):.0f} ms (a process start)")
    for result in results:
        print(
            f"{result['case']:12} UserPromptSubmit p50 {result['userPromptSubmit']['p50']} ms, "
            f"p95 {result['userPromptSubmit']['p95']} ms ({result['injected']}/{result['prompts']} injected; "
            f"after Python's start and imports p50 {result['afterStart']['p50']} ms, "
            f"p95 {result['afterStart']['p95']} ms); "
            f"Stop p50 {result['stop']['p50']} ms, p95 {result['stop']['p95']} ms; "
            f"SessionStart {result['sessionStart']} ms"
            + (
                f"; first SessionStart (starts the server) {result['firstSessionStart']} ms"
                if "firstSessionStart" in result
                else ""
            )
        )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
