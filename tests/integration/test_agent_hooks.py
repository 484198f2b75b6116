"""``neural-memory-hook`` as Claude Code runs it: a process per event, the event's JSON on stdin,
against the real local API (the demo's samples), a server that is down, failing or slow, and
input that is not what it should be. It always exits 0, injects only what clears the floor and
fits the budget, and says in its log what it did or why it did nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.models import ExpertsRequest
from neural_memory.stores.base import read_one

from tests.helpers.events import EVENTS
from tests.helpers.local_api import RunningApi, running_local_api
from tests.helpers.mcp_sessions import free_port

if TYPE_CHECKING:
    from collections.abc import Iterator

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration

HOOK = Path(sys.executable).parent / "neural-memory-hook"
SECRET = "correct-horse-battery-9931"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxLocalEmbedder) -> Iterator[RunningApi]:
    with running_local_api(tmp_path_factory.mktemp("hooks-api"), embedder, EVENTS) as running:
        yield running


class Hooked:
    """A project folder (a git clone of acme/console on branch main) and the hook's state folder."""

    def __init__(self, root: Path) -> None:
        self.project = root / "console"
        (self.project / ".git").mkdir(parents=True)
        (self.project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (self.project / ".git" / "config").write_text(
            '[remote "origin"]\n\turl = https://github.com/acme/console.git\n'
        )
        self.state = root / "state"

    @property
    def log(self) -> str:
        path = self.state / "hooks.log"
        return path.read_text() if path.exists() else ""

    def run(self, payload: Any, *flags: str, key: str = "", raw: bytes | None = None) -> tuple[int, str, float]:
        """The hook on one event: exit code, standard output, seconds taken."""
        env = {**os.environ, "NM_HOOK_STATE_DIR": str(self.state), "NM_API_KEY": key}
        data = raw if raw is not None else json.dumps(payload).encode()
        began = time.monotonic()
        done = subprocess.run([str(HOOK), *flags], input=data, capture_output=True, env=env, timeout=60, check=False)
        return done.returncode, done.stdout.decode(), time.monotonic() - began

    def event(self, name: str, session: str = "s-1", **fields: Any) -> dict[str, Any]:
        return {"session_id": session, "cwd": str(self.project), "hook_event_name": name, **fields}

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.log:
            assert time.monotonic() < deadline, f"no {text!r} in the hook's log:\n{self.log}"
            time.sleep(0.2)
        return self.log


WHY_PROMPT = "Why did we move session refresh into the edge middleware? I am changing src/auth/middleware.ts"


def patiently(api: RunningApi) -> tuple[str, ...]:
    """The hook's flags when what it recalls is under test, not its 2 s deadline (a hung server's
    test has that): the first search of a fresh server builds its index, which a busy machine can
    take past 2 s."""
    return ("--url", api.url, "--timeout", "20")


def context_of(stdout: str, event: str) -> str:
    output = json.loads(stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == event
    return str(output["additionalContext"])


def test_a_prompt_gets_the_memories_relevant_to_it_with_who_knows_and_why_under_the_budget(
    api: RunningApi, tmp_path: Path
) -> None:
    hooked = Hooked(tmp_path)
    prompt, patient = WHY_PROMPT, patiently(api)
    code, out, _ = hooked.run(hooked.event("UserPromptSubmit", prompt=prompt), *patient, key=api.key)
    assert code == 0
    context = context_of(out, "UserPromptSubmit")
    # Each memory with its id, date and source; the decision a later push made stale, said so
    assert "- [decision-session-refresh-edge] 2025-12-" in context and "manual/decision" in context
    line = next(x for x in context.splitlines() if x.startswith("- [decision-session-refresh-edge]"))
    assert "possibly stale: a later push, 7f3a9b2" in line
    # Who knows the path it names, and how the best memory came to be
    assert "- src/auth/middleware.ts: octocat" in context
    assert "came to be, oldest first:" in context
    assert len(context) <= 1_500 * 4

    # With a smaller budget (in another session: this one was shown it all), less, never more than the budget
    asked = hooked.event("UserPromptSubmit", session="s-small", prompt=prompt)
    code, out, _ = hooked.run(asked, *patient, "--budget-tokens", "120", key=api.key)
    small = context_of(out, "UserPromptSubmit")
    assert len(small) <= 120 * 4 and "[" in small and len(small) < len(context)
    assert "recall injected" in hooked.log


def test_a_session_is_shown_a_memory_once_and_again_only_after_its_context_is_compacted(
    api: RunningApi, tmp_path: Path
) -> None:
    hooked = Hooked(tmp_path)
    prompt, patient = WHY_PROMPT, patiently(api)
    full = "- [decision-session-refresh-edge] 2025-12-"

    def recall(session: str) -> str:
        code, out, _ = hooked.run(
            hooked.event("UserPromptSubmit", session=session, prompt=prompt), *patient, key=api.key
        )
        assert code == 0
        return context_of(out, "UserPromptSubmit")

    # Given a prompt whose recall showed the decision, who knows the path and how it came to be
    first = recall("s-1")
    assert full in first and "- src/auth/middleware.ts: octocat" in first and "came to be" in first
    # When the session asks it again, then what its model already has is named by id, not repeated
    again = recall("s-1")
    assert full not in again and "octocat" not in again and "came to be" not in again
    reminder = again.split("Also relevant, shown earlier in this session (still in your context):\n", 1)[1]
    assert reminder.startswith("- ") and "[decision-session-refresh-edge]" in reminder
    assert "shown before" in hooked.log
    # Another session is shown all of it
    assert full in recall("s-2")
    # A resumed session still has it all in context; a compacted one does not, and is shown it again:
    # the decision by the brief (a stale note about the repository), who knows the path by the recall
    resumed = hooked.event("SessionStart", session="s-1", source="resume")
    code, out, _ = hooked.run(resumed, *patient, key=api.key)
    assert code == 0 and full not in out  # its brief leaves out the stale note the session was shown
    assert "octocat" not in recall("s-1")
    code, out, _ = hooked.run(hooked.event("SessionStart", session="s-1", source="compact"), *patient, key=api.key)
    assert code == 0 and full in context_of(out, "SessionStart")
    after = recall("s-1")
    assert "- src/auth/middleware.ts: octocat" in after and full not in after


def test_nothing_is_injected_when_nothing_clears_the_floor(api: RunningApi, tmp_path: Path) -> None:
    hooked = Hooked(tmp_path)
    prompt = "What is a good recipe for banana bread with walnuts and brown butter?"
    code, out, _ = hooked.run(hooked.event("UserPromptSubmit", prompt=prompt), "--url", api.url, key=api.key)
    assert (code, out) == (0, "")
    assert "nothing injected" in hooked.log and "relevance floor" in hooked.log


def test_a_turn_is_remembered_as_turns_of_its_session_without_private_text_or_long_output(
    api: RunningApi, tmp_path: Path
) -> None:
    hooked = Hooked(tmp_path)
    prompt = f"Rename the billing cron to nightly-invoices. <private>token {SECRET}</private> Keep the schedule."
    diff = "```diff\n" + "\n".join(f"+line {n}" for n in range(200)) + "\n```"
    answer = "Done: I renamed the billing cron to nightly-invoices and kept its schedule."
    answer += f"\n{diff}\n<private>{SECRET}</private>"
    assert (
        hooked.run(hooked.event("UserPromptSubmit", prompt=prompt, prompt_id="p-1"), "--url", api.url, key=api.key)[0]
        == 0
    )
    began = time.monotonic()
    code, out, took = hooked.run(
        hooked.event("Stop", prompt_id="p-1", last_assistant_message=answer, stop_hook_active=False),
        "--url",
        api.url,
        key=api.key,
    )
    # The capture returns at once (it carries on detached) and prints nothing
    assert (code, out) == (0, "") and took < 2.0
    hooked.wait_for("captured")
    ids = json.loads((hooked.state / "sessions.jsonl").read_text().splitlines()[-1])["ids"]
    said, answered = (read_one(api.service.store, "demo", i) for i in ids)
    assert said is not None and answered is not None
    assert (said.observation_type, said.session_id, answered.session_id) == ("conversation_turn", "s-1", "s-1")
    assert said.content == "Rename the billing cron to nightly-invoices. [redacted:private] Keep the schedule."
    assert (
        answered.content.startswith("Done: I renamed the billing cron")
        and "[a code block of 200 lines, not kept]" in answered.content
    )
    assert said.metadata["repo"] == "acme/console" and said.metadata["branch"] == "main"
    assert answered.actor_name == "claude-code"
    assert time.monotonic() - began < 60
    # Who knows it: the person who asked (a person), not the agent that answered
    assert (said.metadata["actorKind"], answered.metadata["actorKind"]) == ("human", "agent")
    who = api.service.experts("demo", ExpertsRequest.model_validate({"query": "nightly-invoices billing cron"}), "r")
    assert said.actor_name in [e.actor_name for e in who.experts]
    assert "claude-code" not in [e.actor_name for e in who.experts]
    # The private text is in no file of the hook's
    assert all(SECRET not in p.read_text() for p in hooked.state.rglob("*") if p.is_file())


def test_a_secret_the_agent_printed_is_stored_as_its_placeholder(api: RunningApi, tmp_path: Path) -> None:
    # Given a turn whose answer pastes a token and a database URL with its password (issue 44)
    hooked = Hooked(tmp_path)
    token = "ghp_" + "Tz8Kq3Wm6Yp1Rn4Vs7Ub0Xc2Ld5Fh9Gj3Nk6Q"
    answer = f"Fixed: CI now reads {token} and postgres://app:Hx7!qP2zL9@db:5432/app from the vault."
    assert (
        hooked.run(hooked.event("UserPromptSubmit", prompt="fix CI", prompt_id="p-1"), "--url", api.url, key=api.key)[0]
        == 0
    )
    event = hooked.event("Stop", prompt_id="p-1", last_assistant_message=answer, stop_hook_active=False)
    assert hooked.run(event, "--url", api.url, key=api.key)[:2] == (0, "")
    hooked.wait_for("captured")
    ids = json.loads((hooked.state / "sessions.jsonl").read_text().splitlines()[-1])["ids"]
    answered = read_one(api.service.store, "demo", ids[-1])
    # Then the memory holds the placeholders, and says what was taken out
    assert answered is not None and token not in answered.content and "Hx7!qP2zL9" not in answered.content
    assert "[redacted:github-token]" in answered.content and "[redacted:url-password]" in answered.content
    assert set(answered.redactions or []) == {"content:github-token", "content:url-password"}


def test_a_capture_the_memory_cannot_take_waits_in_the_outbox_and_goes_with_the_next(
    api: RunningApi, tmp_path: Path
) -> None:
    hooked = Hooked(tmp_path)
    down = f"http://127.0.0.1:{free_port()}"
    token = "ghp_" + "Qw4Er7Ty1Ui8Op3As6Df9Gh2Jk5Lz0Xc1Vb4"
    said = f"We keep the cache TTL at 30 s; the deploy reads {token}."
    stop = hooked.event("Stop", session="s-out", prompt_id="p-9", last_assistant_message=said)
    assert hooked.run(stop, "--url", down, key=api.key)[0] == 0
    assert "1 secrets replaced before holding" in hooked.wait_for("capture held")
    # The outbox on disk holds the turn with its secret already replaced, never the secret
    outbox = (hooked.state / "outbox.jsonl").read_text()
    assert len(outbox.splitlines()) == 1 and token not in outbox and "[redacted:github-token]" in outbox
    later = hooked.event(
        "Stop", session="s-out", prompt_id="p-10", last_assistant_message="And the queue at 5 workers."
    )
    assert hooked.run(later, "--url", api.url, key=api.key)[0] == 0
    assert "(1 from the outbox)" in hooked.wait_for("captured")
    assert not (hooked.state / "outbox.jsonl").exists()
    held_id = json.loads(outbox)["id"]
    stored = read_one(api.service.store, "demo", held_id)
    assert stored is not None and "[redacted:github-token]" in stored.content and token not in stored.content


class _Failing(BaseHTTPRequestHandler):
    """An API that answers every request with a 500, or only after 10 seconds."""

    slow = False

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _answer(self) -> None:
        if self.slow:
            time.sleep(10)
        body = b'{"error": {"code": "internal_error", "message": "boom"}}'
        self.send_response(500)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer


@pytest.fixture
def failing() -> Iterator[tuple[str, str]]:
    """(url of a server answering 500, url of a server answering after 10 s)."""
    fast = ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    slow = ThreadingHTTPServer(("127.0.0.1", 0), type("_Slow", (_Failing,), {"slow": True}))
    for server in (fast, slow):
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{fast.server_address[1]}", f"http://127.0.0.1:{slow.server_address[1]}"
    finally:
        for server in (fast, slow):
            server.shutdown()
            server.server_close()


PROMPT = "Why did the console deploy fail on Tuesday?"


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("malformed JSON", "malformed JSON on stdin"),
        ("not an object", "malformed JSON on stdin: not a JSON object"),
        ("unknown event", "an event this hook does not handle: 'PreCompactify'"),
        ("missing transcript", "transcript unreadable"),
        ("no key", "no NM_API_KEY"),
        ("server down", "unreachable"),
        ("server answers 500", "HTTP 500 internal_error"),
        ("server too slow", "no reply by the hook's deadline"),
    ],
)
def test_bad_input_or_a_memory_that_fails_exits_0_at_once_injects_nothing_and_says_why(
    case: str, reason: str, tmp_path: Path, failing: tuple[str, str]
) -> None:
    hooked = Hooked(tmp_path)
    key = "nm_0123456789ab_" + "k" * 43
    prompt = hooked.event("UserPromptSubmit", prompt=PROMPT)
    url, raw, payload = f"http://127.0.0.1:{free_port()}", None, prompt
    if case == "malformed JSON":
        raw = b'{"session_id": "s-1", "hook_event_name": "UserPromptSub'
    elif case == "not an object":
        raw = b'["UserPromptSubmit"]'
    elif case == "unknown event":
        payload = hooked.event("PreCompactify")
    elif case == "missing transcript":
        payload = hooked.event("Stop", transcript_path=str(tmp_path / "gone.jsonl"))
    elif case == "no key":
        key = ""
    elif case == "server answers 500":
        url = failing[0]
    elif case == "server too slow":
        url = failing[1]
    code, out, took = hooked.run(payload, "--url", url, "--timeout", "1.5", key=key, raw=raw)
    assert (code, out) == (0, "")
    assert took < 4.0, f"{case}: {took:.1f} s"  # the deadline, plus a Python start on a busy machine
    if case == "missing transcript":  # the capture's own process says it, once it has looked
        hooked.wait_for(reason, timeout=30)
    assert reason in hooked.log, hooked.log


def test_status_says_what_is_installed_and_whether_the_memory_answers(api: RunningApi, tmp_path: Path) -> None:
    from neural_memory.local.agents.claude_code import Target, install, status

    # Given nothing installed, Then status says so and is not well
    healthy, lines = status(tmp_path, None)
    assert not healthy and "  MCP server: not installed" in lines and "  hooks: not installed" in lines
    # Given the memory installed on the running API with its key
    install(tmp_path, Target(url=api.url), api.key)
    healthy, lines = status(tmp_path, None)
    assert healthy, lines
    assert f"  MCP server: in .mcp.json -> {api.url}" in lines
    assert "  hooks: SessionStart, UserPromptSubmit, Stop in .claude/settings.json" in lines
    assert "  key: NM_API_KEY from .claude/settings.local.json" in lines
    assert any(line.startswith(f"  memory: answers at {api.url} (") for line in lines)
    # Given a key the API refuses, Then status says the memory does not answer, and why
    install(tmp_path, Target(url=api.url), "nm_0123456789ab_" + "k" * 43)
    healthy, lines = status(tmp_path, None)
    assert not healthy and any("does not answer" in line and "HTTP 401" in line for line in lines)


def test_a_session_starts_with_where_the_last_left_off_recent_decisions_and_stale_notes(
    api: RunningApi, tmp_path: Path
) -> None:
    from datetime import UTC, datetime

    from tests.helpers.processes import call

    hooked = Hooked(tmp_path)
    # Given a decision about acme/console taken today, one about another repository, and a turn of an earlier session
    today = datetime.now(UTC).isoformat()
    decisions = [
        {"id": "decision-cache-ttl", "source": "manual", "observationType": "decision", "occurredAt": today,
         "title": "Decision: cache search results for 30 s at the edge", "content": "We decided to cache for 30 s.",
         "metadata": {"repo": "acme/console"}},
        {"id": "decision-elsewhere", "source": "manual", "observationType": "decision", "occurredAt": today,
         "title": "Decision: billing retries", "content": "We decided to retry billing twice.",
         "metadata": {"repo": "acme/billing"}},
    ]  # fmt: skip
    assert call(api.url, api.key, "POST", "/v1/observations", {"observations": decisions})[0] in (200, 201)
    ended = hooked.event("Stop", session="s-before", prompt_id="p-1", last_assistant_message="Next: wire the TTL flag.")
    assert hooked.run(ended, "--url", api.url, key=api.key)[0] == 0
    hooked.wait_for("captured")
    # When a new session starts in the project
    started = hooked.event("SessionStart", session="s-now", source="startup")
    code, out, _ = hooked.run(started, *patiently(api), key=api.key)  # the brief is under test, not its deadline
    # Then its brief says where the last session left off, the recent decision and the stale note, with their ids
    brief = context_of(out, "SessionStart")
    assert brief.startswith("Neural Memory (the team's long-term memory) on acme/console, branch main.")
    assert "- session s-before, " in brief and "claude-code: Next: wire the TTL flag." in brief
    assert "- [decision-cache-ttl] " in brief and "decision-elsewhere" not in brief
    stale = next(line for line in brief.splitlines() if line.startswith("- [decision-session-refresh-edge]"))
    assert "possibly stale: a later push, 7f3a9b2" in stale
    # And a prompt of that session names the stale note the brief showed rather than repeating it
    asked = hooked.event("UserPromptSubmit", session="s-now", prompt="Why did we move session refresh to the edge?")
    code, out, _ = hooked.run(asked, *patiently(api), key=api.key)
    recalled = context_of(out, "UserPromptSubmit")
    assert "- [decision-session-refresh-edge] 2025-12-" not in recalled
    assert "[decision-session-refresh-edge]" in recalled.split("shown earlier in this session", 1)[1]


def test_an_embedded_server_that_stopped_right_after_its_start_is_not_started_on_every_prompt(tmp_path: Path) -> None:
    # Given a data folder whose background server stopped a moment after it was started
    hooked = Hooked(tmp_path)
    data = tmp_path / "memory"
    data.mkdir()
    probe = [sys.executable, "-c", "import os; print(os.getpid())"]
    gone = subprocess.run(probe, capture_output=True, text=True, check=True)
    server = {"url": f"http://127.0.0.1:{free_port()}", "pid": int(gone.stdout), "started": time.time()}
    (data / "agent-server.json").write_text(json.dumps(server))
    # When a prompt's hook runs on that folder
    prompt = hooked.event("UserPromptSubmit", prompt=PROMPT)
    code, out, took = hooked.run(
        prompt, "--data-dir", str(data), "--workspace", "agent", key="nm_0123456789ab_" + "k" * 43
    )
    # Then it says so at once, and starts nothing
    assert (code, out) == (0, "") and took < 4.0
    assert "the background server stopped after its start: see agent-server.log" in hooked.log
    assert json.loads((data / "agent-server.json").read_text()) == server


def test_a_capture_never_starts_the_embedded_server_it_waits_in_the_outbox(tmp_path: Path) -> None:
    # Given a data folder with no background server (say `agents uninstall` just stopped it)
    hooked = Hooked(tmp_path)
    data = tmp_path / "memory"
    stop = hooked.event("Stop", session="s-late", prompt_id="p-1", last_assistant_message="Late answer.")
    # When a capture runs on it
    assert hooked.run(stop, "--data-dir", str(data), "--workspace", "agent", key="nm_0123456789ab_" + "k" * 43)[0] == 0
    # Then the turn waits in the outbox, and no server was started
    assert "no background server runs" in hooked.wait_for("capture held")
    assert len((hooked.state / "outbox.jsonl").read_text().splitlines()) == 1
    assert not (data / "agent-server.json").exists()
