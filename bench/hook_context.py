"""What Claude Code's prompt hook hands the model on a real history, and what that costs.

    python -m bench.hook_context CLONE --questions bench/questions/NAME.json \
        --generic bench/prompts/generic_holdout.json [--data-dir DIR] [--json]

The clone's history is brought in as a user does (``neural-memory import git``, into ``DIR/data``,
kept between runs while it holds the same head), a server runs on it (``serve --no-demo``, a key
of its own), and ``neural-memory-hook --url`` runs as Claude Code runs it: a new process per
prompt, the event's JSON on stdin, a new session each time (so nothing is left out as "shown
earlier"). Three kinds of prompt:

- the question set's change questions ("why did ...", "which PR added ..."): answered when the
  injected text names the id of a PR that made the change (its merged-PR observation, or the push
  of its merge commit);
- the generic prompts (acknowledgements, chores on the code at hand, general programming
  questions): they ask nothing of the history, and the hook should inject nothing;
- "remember: ..." prompts: a write, not a question; nothing injected.

Printed: the share of change questions whose answering PR is injected, mean and max characters
injected for them, the share of generic and of remember prompts with nothing injected, the size of
the MCP tools' definitions as the server's ``tools/list`` returns them (names, titles,
descriptions, input schemas, annotations: ``json.dumps`` of the list), and the hook's wall time
(p50/p95 over every prompt, Python's start included; ``--pause`` seconds between prompts, 0.5 by
default, as the model's answer leaves at least between two prompts of a session).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from bench.agent_hooks import BIN, HOOK, free_port, percentile, run_hook, start_serve

WORKSPACE = "history"
MARKER = "hook-context.json"


def head(clone: Path) -> str:
    done = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def imported(clone: Path, repo: str, data: Path) -> None:
    """``import git`` of the clone into ``data``, unless it already holds this head (progress shown)."""
    wanted = {"repo": repo, "head": head(clone)}
    marker = data / MARKER
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        return
    if data.exists():
        shutil.rmtree(data)
    command = [str(BIN / "neural-memory"), "import", "git", str(clone), "--repo", repo]
    subprocess.run([*command, "--workspace", WORKSPACE, "--data-dir", str(data)], check=True)
    marker.write_text(json.dumps(wanted))


def new_key(data: Path) -> str:
    command = [str(BIN / "neural-memory"), "keys", "create", "--workspace", WORKSPACE, "--data-dir", str(data)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1]


def call(url: str, key: str, path: str, body: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(
        url + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json"},
        method="GET" if body is None else "POST",
    )
    with urllib.request.urlopen(request, timeout=30) as reply:  # loopback only
        return json.loads(reply.read())


def answering_ids(url: str, key: str, repo: str, numbers: list[int]) -> dict[int, set[str]]:
    """Each PR's merged-PR observation and the push of its merge commit (what ``import git`` names them)."""
    slug = repo.replace("/", ".")
    found: dict[int, set[str]] = {}
    for number in numbers:
        pr_id = f"github-pr-{slug}-{number}-pull_request_merged"
        try:
            record = call(url, key, f"/v1/observations/{pr_id}")
        except OSError:
            found[number] = set()
            continue
        sha = (record.get("metadata") or {}).get("commitSha")
        found[number] = {pr_id} | ({f"github-push-{slug}-{sha[:12]}"} if isinstance(sha, str) else set())
    return found


def tool_definitions(url: str, key: str) -> int:
    """Characters of the tools' definitions as ``tools/list`` over the server's ``/mcp`` returns them."""
    request = urllib.request.Request(
        url + "/mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode(),
        headers={
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as reply:  # loopback only
        tools = json.loads(reply.read())["result"]["tools"]
    return len(json.dumps(tools))


def injected(out: str) -> str:
    if not out.strip():
        return ""
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def run(args: argparse.Namespace) -> dict[str, Any]:
    questions = json.loads(Path(args.questions).read_text())
    prompts = json.loads(Path(args.generic).read_text())
    repo = questions["repo"]
    base = Path(args.data_dir or tempfile.mkdtemp(prefix="bench-hook-context-"))
    data = base / "data"
    imported(Path(args.clone), repo, data)
    key = new_key(data)
    port = free_port()
    server = start_serve(data, port, "--no-demo")
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"NM_API_KEY": key, "NM_HOOK_STATE_DIR": str(base / "state"), "NM_AGENT_USER": "bench"}
    flags = [f"--url={url}", "--timeout=2.0"]

    def prompt(text: str) -> tuple[float, str]:
        event = {
            "session_id": str(uuid.uuid4()),
            "hook_event_name": "UserPromptSubmit",
            "prompt": text,
            "cwd": str(args.clone),
            "transcript_path": "",
        }
        took, out = run_hook(flags, event, env)
        time.sleep(args.pause)  # the model answers before the next prompt: what a hook left running ends meanwhile
        return took, injected(out)

    try:
        # A session starts as Claude Code starts one: its hook learns the workspace's background
        # (relevance.py) in a detached process; the prompts are asked once it has.
        start = {"session_id": "bench-start", "hook_event_name": "SessionStart", "source": "startup"}
        run_hook(flags, {**start, "cwd": str(args.clone), "transcript_path": ""}, env)
        learning = base / "state" / "background"
        began = time.monotonic()  # (a hook that learns nothing has no such folder after a few seconds)
        while time.monotonic() < began + 120 and not list(learning.glob("*.json")):
            if time.monotonic() > began + 5 and not learning.exists():
                break
            time.sleep(0.5)
        for text in prompts["prompts"][:3]:  # the server's first searches warm its caches: not timed
            prompt(text)
        times: list[float] = []
        changes = questions["changes"]
        truth = answering_ids(url, key, repo, sorted({n for q in changes for n in q["prs"]}))
        rows = []
        for question in changes:
            took, text = prompt(question["question"])
            times.append(took)
            ids = set().union(*(truth[n] for n in question["prs"]))
            rows.append({"question": question["question"], "answered": any(f"[{i}]" in text for i in ids),
                         "chars": len(text)})  # fmt: skip
            if args.show:
                print(f"--- {question['question']} -> {rows[-1]}\n{text}\n", file=sys.stderr)
        generic = []
        for text in prompts["prompts"]:
            took, said = prompt(text)
            times.append(took)
            generic.append({"prompt": text, "chars": len(said)})
            if args.show and said:
                print(f"--- GENERIC {text!r}\n{said}\n", file=sys.stderr)
        remember = []
        for text in prompts.get("remember", []):
            took, said = prompt(text)
            times.append(took)
            remember.append({"prompt": text, "chars": len(said)})
        chars = [r["chars"] for r in rows]
        return {
            "repo": repo,
            "changeQuestions": len(rows),
            "answeredShare": round(sum(r["answered"] for r in rows) / len(rows), 3),
            "meanChars": round(sum(chars) / len(chars)),
            "maxChars": max(chars),
            "genericPrompts": len(generic),
            "genericQuietShare": round(sum(not g["chars"] for g in generic) / len(generic), 3),
            "rememberPrompts": len(remember),
            "rememberQuietShare": round(sum(not r["chars"] for r in remember) / max(1, len(remember)), 3),
            "toolDefinitionsChars": tool_definitions(url, key),
            "hookMs": {"p50": round(percentile(times, 0.5)), "p95": round(percentile(times, 0.95))},
            "missed": [r["question"] for r in rows if not r["answered"]],
            "noisy": [g["prompt"] for g in generic if g["chars"]],
        }
    finally:
        server.terminate()
        server.wait(60)
        if not args.data_dir:
            shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("clone", help="a git clone (its history is imported)")
    parser.add_argument("--questions", required=True, help="a question set (bench/questions/NAME.json)")
    parser.add_argument("--generic", required=True, help="prompts that ask nothing of the history (bench/prompts/)")
    parser.add_argument("--data-dir", help="kept between runs: the imported history, the hook's state")
    parser.add_argument("--pause", type=float, default=0.5, help="seconds between prompts (the model's answer)")
    parser.add_argument("--show", action="store_true", help="print each injected text to stderr")
    parser.add_argument("--json", action="store_true", help="the whole result as JSON")
    args = parser.parse_args()
    if not HOOK.exists():
        raise SystemExit(f"no {HOOK}: install the package first (make dev)")
    result = run(args)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{result['repo']}: answering PR injected {result['answeredShare']:.2f} of {result['changeQuestions']} "
        f"change questions; injected chars mean {result['meanChars']}, max {result['maxChars']}; "
        f"nothing injected for {result['genericQuietShare']:.2f} of {result['genericPrompts']} generic prompts "
        f"and {result['rememberQuietShare']:.2f} of {result['rememberPrompts']} remember prompts; "
        f"MCP tool definitions {result['toolDefinitionsChars']} chars; "
        f"UserPromptSubmit p50 {result['hookMs']['p50']} ms, p95 {result['hookMs']['p95']} ms"
    )


if __name__ == "__main__":
    main()
