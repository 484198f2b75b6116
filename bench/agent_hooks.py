"""What Claude Code's hooks cost the agent per prompt: ``neural-memory-hook`` run as Claude Code
runs it (a new process per event, the event's JSON on stdin), timed from start to exit.

    python -m bench.agent_hooks [--prompts 50] [--data-dir DIR] [--installs 10] [--installs-only]

Two cases, on a fresh data folder holding the demo's samples (``events/``):

1. warm server: ``neural-memory serve`` already running; the hooks installed with ``--url``.
2. embedded: the same data folder with that server stopped, the hooks on ``--data-dir``; the first
   ``SessionStart`` finds no server and starts the background one (timed apart: once per data
   folder), then every prompt reuses it.

For each, after five untimed prompts: ``UserPromptSubmit`` over ``--prompts`` prompts
(engineering questions about the samples and unrelated ones, so both a recall and a recall of
nothing are timed), p50 and p95 of the wall time and how many injected something; ``Stop`` (the
capture, which returns at once and carries on detached) p50 and p95; ``SessionStart`` (the
brief). The target: ``UserPromptSubmit`` p95 <= 300 ms warm.

3. fresh installs (issue 54), ``--installs`` times: a new repository (origin on GitHub, a history
   older than 30 days), ``neural-memory import git .`` and ``neural-memory agents install claude-code
   --project .`` in it with no flags, then the first ``SessionStart`` as Claude Code runs it (the
   command ``.claude/settings.json`` holds, through a shell, with ``settings.local.json``'s env):
   its p50 and p95 (the target: within 3 s) and how many briefs were not empty; then ``agents
   uninstall`` (which stops that memory's background server). A bare ``python -c pass`` is timed
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

import neural_memory.local.agents

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


def old_repository(root: Path, n: int) -> Path:
    """A repository of acme/bench-N whose history (pushes and merged pull requests) ended 60 days ago."""
    root.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "Ann Lee", "GIT_AUTHOR_EMAIL": "ann@example.org"}
    env |= {"GIT_COMMITTER_NAME": "Ann Lee", "GIT_COMMITTER_EMAIL": "ann@example.org"}

    def git(*words: str, days: int = 60) -> None:
        at = f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(time.time() - days * 86400))}+00:00"
        subprocess.run(["git", "-C", str(root), *words], env={**env, "GIT_AUTHOR_DATE": at, "GIT_COMMITTER_DATE": at},
                       check=True, capture_output=True)  # fmt: skip

    git("init", "-q", "-b", "main")
    git("remote", "add", "origin", f"https://github.com/acme/bench-{n}.git")
    for number, subject in enumerate(SUBJECTS[:6], 1):
        (root / f"part{number}.txt").write_text(subject + "\n")
        git("add", ".", days=60 + 7 * (6 - number))
        git("commit", "-q", "-m", f"{subject.capitalize()} (#{number})", days=60 + 7 * (6 - number))
    return root


def fresh_installs(base: Path, env: dict[str, str], count: int) -> dict[str, Any]:
    """The first SessionStart after ``count`` fresh installs (the module's docstring, case 3)."""
    first, installs, briefs = [], [], 0
    env = {**env, "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}"}  # the package on PATH, as the README installs it
    for n in range(count):
        project = old_repository(base / f"install-{n}", n)

        def cli(*words: str, project: Path = project) -> None:
            command = [str(BIN / "neural-memory"), *words]
            subprocess.run(command, cwd=project, env=env, capture_output=True, check=True, stdin=subprocess.DEVNULL)

        cli("import", "git", ".")
        began = time.perf_counter()
        cli("agents", "install", "claude-code", "--project", ".")
        installs.append((time.perf_counter() - began) * 1000)
        try:
            settings = json.loads((project / ".claude" / "settings.json").read_text())
            (command,) = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
            local = json.loads((project / ".claude" / "settings.local.json").read_text())["env"]
            hook_env = {**env, **local, "CLAUDE_PROJECT_DIR": str(project)}
            payload = {"session_id": f"first-{n}", "cwd": str(project), "hook_event_name": "SessionStart",
                       "source": "startup", "transcript_path": ""}  # fmt: skip
            began = time.perf_counter()
            done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(), cwd=project,
                                  env=hook_env, capture_output=True, check=False)  # fmt: skip
            first.append((time.perf_counter() - began) * 1000)
            briefs += bool(done.stdout.strip())
        finally:
            cli("agents", "uninstall", "claude-code", "--project", ".")
    return {
        "case": "fresh installs",
        "installs": count,
        "firstSessionStart": {"p50": round(percentile(first, 0.5)), "p95": round(percentile(first, 0.95))},
        "briefs": briefs,
        "install": {"p50": round(percentile(installs, 0.5)), "p95": round(percentile(installs, 0.95))},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=50)
    parser.add_argument("--data-dir", help="a folder for the two data folders (default: a temporary one, removed)")
    parser.add_argument("--installs", type=int, default=10, help="fresh installs whose first SessionStart is timed")
    parser.add_argument("--installs-only", action="store_true", help="only the fresh installs (case 3)")
    args = parser.parse_args()
    compileall.compile_dir(str(Path(neural_memory.local.agents.__file__).parent), quiet=1)
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
    if args.installs_only:
        installed = fresh_installs(base, env, args.installs)
        if not args.data_dir:
            shutil.rmtree(base, ignore_errors=True)
        print(_installs_line(installed))
        print(json.dumps([installed]))
        return
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
        if args.installs:
            results.append(fresh_installs(base, env, args.installs))
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
        from neural_memory.local.agents.local_server import stop_server

        stop_server(str(base / "served"))
        if not args.data_dir:
            shutil.rmtree(base, ignore_errors=True)
    print(f"python -c pass  p50 {percentile(bare, 0.5):.0f} ms, p95 {percentile(bare, 0.95):.0f} ms (a process start)")
    for result in results:
        if result["case"] == "fresh installs":
            print(_installs_line(result))
            continue
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


def _installs_line(result: dict[str, Any]) -> str:
    first, install = result["firstSessionStart"], result["install"]
    return (
        f"fresh installs ({result['installs']}): first SessionStart p50 {first['p50']} ms, p95 {first['p95']} ms "
        f"({result['briefs']}/{result['installs']} briefs not empty); agents install p50 {install['p50']} ms, "
        f"p95 {install['p95']} ms (it starts the background server)"
    )


if __name__ == "__main__":
    main()
