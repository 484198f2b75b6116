"""``neural-memory-hook``: what Claude Code runs at each hook event, with the event's JSON on stdin.

- ``SessionStart``: prints the brief (``recall.session_brief``) as ``additionalContext``.
- ``UserPromptSubmit``: keeps the prompt for ``Stop`` and prints the memories relevant to it
  (``recall.prompt_recall``) as ``additionalContext``.
- ``Stop``: remembers the turn (the prompt and the final answer, ``capture``) from a detached
  process, so the agent never waits for it; what cannot be delivered waits in the outbox.

It never blocks the agent: whatever happens (malformed JSON, an unknown event, a missing
transcript, a memory that is down, slow or failing) it exits 0, prints nothing but a brief or a
recall, within its own deadline (``--timeout``, below the timeout Claude Code is given), and says
what it did or why it did nothing in one line of ``hooks.log`` (``hook_state``). Only the standard
library is imported: no pydantic, no model, no HTTP stack (measured in ``bench/agent_hooks.py``).

Where the memory is: ``--url`` (or ``NM_API_URL``), or ``--data-dir`` for the embedded store, whose
background server the hook starts once (``local_server``); the key is ``NM_API_KEY`` (Claude Code
sets it from ``.claude/settings.local.json``)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from neural_memory.local.agents.hook_flags import Flags
from neural_memory.local.agents.hook_state import HookState

if TYPE_CHECKING:
    from neural_memory.local.agents.memory_client import MemoryApi

# Each event imports what it needs when it runs (a prompt's recall never loads the capture's
# hashing, a capture never loads the recall's threads): the start is what every prompt pays.

MAX_STDIN = 8 * 1024 * 1024  # a hook's payload is a few KB; more is not a payload
PROMPT_TIMEOUT_S = 2.0  # a recall's deadline; Claude Code is given 5 s (agents install)
START_TIMEOUT_S = 3.0  # a brief's deadline, when the memory already runs
FIRST_START_S = 2.7  # a brief's deadline when the hook had to start the embedded background server: within
# the 3 s a first session may wait (agents install starts it; one not up by then is said in the log)
CAPTURE_TIMEOUT_S = 60.0  # the detached capture's deadline (nobody waits for it)
PREVIOUS_SESSIONS = 2  # sessions whose last turn the brief shows
BATCH = 100  # observations per POST /v1/observations (the API's limit)


class Hook:
    """One run: the flags, the event's payload, the state folder and the clock it started on."""

    def __init__(self, args: Flags, payload: dict[str, Any], state: HookState, began: float) -> None:
        self.args = args
        self.payload = payload
        self.state = state
        self.began = began
        self.event = str(payload.get("hook_event_name") or "")
        self.session_id = str(payload.get("session_id") or "")
        self.cwd = str(payload.get("cwd") or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())

    def log(self, outcome: str, detail: str = "") -> None:
        self.state.log(self.event, self.session_id, outcome, self.began, detail)

    def memory(self, deadline: float, start: bool = True) -> tuple[MemoryApi | None, str]:
        """The API to call, or None and why there is none (``start``: the embedded store's
        background server may be started for it)."""
        from neural_memory.local.agents.memory_client import MemoryApi

        key = os.environ.get("NM_API_KEY", "").strip()
        if not key:
            return None, "no NM_API_KEY in the environment (agents install writes it to .claude/settings.local.json)"
        url = self.args.url or os.environ.get("NM_API_URL", "")
        if url:
            return MemoryApi(url, key, deadline), ""
        data_dir = self.data_dir()
        if not data_dir:
            return None, "no --url, no NM_API_URL, and no repository's memory here (agents install makes one)"
        from neural_memory.local.agents.local_server import ensure_server

        served, why = ensure_server(data_dir, deadline, start)
        if served is None:
            return None, why
        return MemoryApi(served, key, deadline), why

    def data_dir(self) -> str:
        """The embedded store's folder: ``--data-dir``, ``NM_DATA_DIR``, else the repository's own
        memory (``repository_memory``); "" when there is none."""
        if self.args.url or os.environ.get("NM_API_URL"):
            return ""
        if chosen := self.args.data_dir or os.environ.get("NM_DATA_DIR", ""):
            return chosen
        from pathlib import Path

        from neural_memory.local.agents.repository_memory import repository_memory

        memory = repository_memory(Path(os.environ.get("CLAUDE_PROJECT_DIR") or self.cwd))
        return str(memory.data_dir) if memory is not None and memory.exists() else ""

    def inject(self, text: str) -> None:
        output = {"hookSpecificOutput": {"hookEventName": self.event, "additionalContext": text}}
        sys.stdout.write(json.dumps(output) + "\n")
        sys.stdout.flush()

    # SessionStart --------------------------------------------------------------------------
    def session_start(self) -> None:
        from pathlib import Path

        from neural_memory.local.agents.recall import RecallSettings, session_brief
        from neural_memory.local.agents.relevance import read_background
        from neural_memory.local.agents.repository import read_repository

        if self.payload.get("source") != "resume":  # a new, cleared or compacted context holds none of it
            self.state.forget_shown(self.session_id)
        settings = RecallSettings(self.args.budget_tokens, self.args.floor)
        data_dir = self.data_dir()
        first = data_dir and not _server_known(data_dir)
        deadline = self.began + (FIRST_START_S if first else self.args.timeout or START_TIMEOUT_S)
        api, why = self.memory(deadline)
        if api is None:
            self.log("nothing injected", why)
            return
        if read_background(self.state.folder, api.url, api.key)[1]:  # due: learnt before the prompts need it
            self._learn_background(api, deadline)
        repository = read_repository(Path(self.cwd))
        left_off = self.state.left_off(self.cwd, self.session_id, PREVIOUS_SESSIONS)
        seen = self.state.shown(self.session_id)  # a resumed session's: what its context holds already
        text, note, shown = session_brief(api, repository, self.session_id, left_off, settings, seen)
        if text:
            self.inject(text)
            self.state.add_shown(self.session_id, shown)
        self.log("brief injected" if text else "nothing injected", "; ".join(filter(None, [why, note])))

    # UserPromptSubmit ----------------------------------------------------------------------
    def user_prompt(self) -> None:
        from neural_memory.local.agents.private_spans import strip_private

        prompt = strip_private(str(self.payload.get("prompt") or ""))
        try:
            self._recall(prompt)
        finally:  # after the recall: the detectors' load in the stash's child never slows it
            self._stash(prompt)

    def _recall(self, prompt: str) -> None:
        from neural_memory.local.agents.recall import RecallSettings, prompt_recall
        from neural_memory.local.agents.relevance import is_remember, read_background

        deadline = self.began + (self.args.timeout or PROMPT_TIMEOUT_S)
        api, why = self.memory(deadline)
        if api is None:
            self.log("nothing injected", why)
            return
        if is_remember(prompt):  # a write, not a question: nothing to recall, the fact kept now
            self.log("nothing injected", _joined(why, self._remember(api, prompt)))
            return
        background, due = read_background(self.state.folder, api.url, api.key)
        if due:
            self._learn_background(api, deadline)
        settings = RecallSettings(self.args.budget_tokens, self.args.floor)
        seen = self.state.shown(self.session_id)
        text, note, shown = prompt_recall(api, prompt, self.session_id, settings, seen, background)
        if text:
            self.inject(text)
            self.state.add_shown(self.session_id, shown)
        learnt = "" if background.learnt else "the workspace's background not learnt yet"
        self.log("recall injected" if text else "nothing injected", _joined(why, note, learnt))

    def _remember(self, api: MemoryApi, prompt: str) -> str:
        """Store what the prompt asks to remember (``capture.remembered``); what came of it, for the log."""
        from datetime import UTC, datetime
        from pathlib import Path

        from neural_memory.local.agents.capture import remembered
        from neural_memory.local.agents.memory_client import MemoryUnavailable
        from neural_memory.local.agents.repository import read_repository

        observation = remembered(
            session_id=self.session_id or "unknown-session",
            prompt=prompt,
            at=datetime.now(UTC).isoformat(),
            repository=read_repository(Path(self.cwd)),
            user=_user(),
        )
        if observation is None:
            return "a prompt to remember, with nothing to keep"
        try:
            api.add([observation])
        except MemoryUnavailable as exc:  # the turn is still captured at Stop
            return f"a prompt to remember: not stored now ({exc.reason}); the turn is captured at Stop"
        return f"a prompt to remember: stored as {observation['observationType']} [{observation['id']}]"

    def _learn_background(self, api: MemoryApi, after: float) -> None:
        """Learn what prompts unrelated to the workspace score there (``relevance``), in a detached
        process that starts once this event's own deadline (``after``) has passed, so its searches
        never compete with the brief's or the recall's: the event under way uses what is known now."""
        from neural_memory.local.agents.child_process import detached

        if not detached():
            return
        try:
            time.sleep(max(0.0, after - time.monotonic()))
            from neural_memory.local.agents.memory_client import MemoryApi
            from neural_memory.local.agents.relevance import learn_background

            began = time.monotonic()
            learner = MemoryApi(api.url, api.key, began + CAPTURE_TIMEOUT_S)
            count = learn_background(self.state.folder, api.url, api.key, learner.search)
            if count:
                self.state.log(self.event, self.session_id, "background learnt", began, f"{count} prompts searched")
        except Exception as exc:
            self.log("background failed", f"{type(exc).__name__}: {str(exc)[:200]}")
        finally:
            if hasattr(os, "fork"):
                os._exit(0)

    def _stash(self, prompt: str) -> None:
        """Keep the prompt for Stop with its secrets replaced before it touches the disk: the
        detectors load (about 0.3 s) in a child of its own, so the prompt's recall never waits for
        them; where there is no fork, here."""
        prompt_id = str(self.payload.get("prompt_id") or "")
        with contextlib.suppress(OSError):
            self.state.stashing(self.session_id)
        try:
            child = os.fork() if hasattr(os, "fork") else 0
        except OSError:  # no process to spare: the prompt waits for the detectors instead
            child = -1
        if child > 0:
            return
        forked = child == 0 and hasattr(os, "fork")
        try:
            if forked:
                os.setsid()
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):  # the agent reads the hook's stdout until every holder closes it
                    os.dup2(devnull, fd)
            try:
                from neural_memory.redaction.observations import redact_text
            except ImportError:  # no detectors (installed without the server): Stop reads the transcript
                text = ""
            else:
                text = redact_text(prompt)[0]
            with contextlib.suppress(OSError):
                self.state.stash_prompt(self.session_id, prompt_id, text)
        finally:
            if forked:
                os._exit(0)

    # Stop ----------------------------------------------------------------------------------
    def stop(self) -> None:
        """Fork at once: the agent waits for this process only; the child reads the turn, builds its
        observations and delivers them (where there is no fork, all of it happens here)."""
        from neural_memory.local.agents.child_process import detached

        stashed = self.state.take_prompt(self.session_id) or {}  # before the next prompt can replace it
        if not detached():
            self.log("capture sent", "the turn is read and delivered in the background")
            return
        try:
            self._capture(stashed)
        except Exception as exc:  # the child's own log line: nobody else will see it
            self.log("capture failed", f"{type(exc).__name__}: {str(exc)[:200]}")
        finally:
            if hasattr(os, "fork"):
                os._exit(0)

    def _capture(self, stashed: dict[str, Any]) -> None:
        import hashlib
        from datetime import UTC, datetime
        from pathlib import Path

        from neural_memory.local.agents.capture import turn_observations
        from neural_memory.local.agents.private_spans import strip_private
        from neural_memory.local.agents.repository import read_repository
        from neural_memory.local.agents.transcript import last_turn

        self.began = time.monotonic()
        now = datetime.now(UTC).isoformat()
        prompt, answer = str(stashed.get("prompt") or ""), str(self.payload.get("last_assistant_message") or "")
        missing = ""
        if not prompt or not answer:
            from_transcript, missing = last_turn(self.payload.get("transcript_path"))
            prompt = prompt or strip_private(from_transcript[0])
            answer = answer or from_transcript[1]
        turn_key = str(self.payload.get("prompt_id") or stashed.get("promptId") or "")
        turn_key = turn_key or hashlib.sha256(f"{prompt}\x00{answer}".encode()).hexdigest()
        observations = turn_observations(
            session_id=self.session_id or "unknown-session",
            turn_key=turn_key,
            prompt=prompt,
            prompt_at=str(stashed.get("at") or now),
            answer=answer,
            answer_at=now,
            repository=read_repository(Path(self.cwd)),
            user=_user(),
        )
        if not observations:
            self.log("nothing captured", "; ".join(filter(None, ["the turn had no text", missing])))
            return
        self.state.record_turn(self.cwd, self.session_id, [o["id"] for o in observations])
        self._deliver(observations, missing)

    def _deliver(self, observations: list[dict[str, Any]], note: str = "") -> None:
        """Send the outbox, then this turn, in batches the API takes; what is not delivered stays
        in the outbox (under a lock: two captures at once never send or drop the same turn)."""
        import fcntl

        from neural_memory.local.agents.memory_client import MemoryUnavailable
        from neural_memory.local.agents.outbox_redaction import without_secrets

        began = time.monotonic()
        with open(self.state.path("outbox.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            waiting = self.state.held()
            pending = waiting + observations
            api, why = self.memory(began + CAPTURE_TIMEOUT_S, start=False)
            if api is not None and self.state.read_only(api.key):
                return  # a read key: said once, when its first write was refused
            written = 0
            for start in range(0, len(pending), BATCH if api is not None else len(pending)):
                try:
                    if api is None:
                        raise MemoryUnavailable(why)
                    written += len(api.add(pending[start : start + BATCH]).get("ids") or [])
                except MemoryUnavailable as exc:
                    if exc.status == 403 and api is not None:  # forbidden: a read key never writes
                        self.state.note_read_only(api.key)
                        self.state.clear_outbox()
                        detail = "the key may not write (a read key): prompts are recalled, turns not captured"
                        self.state.log(self.event, self.session_id, "not captured", began, detail)
                        return
                    held, secrets = without_secrets(pending[start:])
                    dropped = self.state.keep(held)
                    detail = f"{exc.reason}; {len(pending) - start} in the outbox" + _dropped(dropped)
                    detail += f"; {secrets} secrets replaced before holding" if secrets else ""
                    self.state.log(self.event, self.session_id, "capture held", began, _joined(detail, note))
                    return
            self.state.clear_outbox()
        detail = f"{written} observations written" + (f" ({len(waiting)} from the outbox)" if waiting else "")
        self.state.log(self.event, self.session_id, "captured", began, _joined(detail, note))


def _joined(*parts: str) -> str:
    return "; ".join(part for part in parts if part)


def _dropped(count: int) -> str:
    return f"; the outbox was full: {count} oldest dropped" if count else ""


def _server_known(data_dir: str) -> bool:
    from neural_memory.local.agents.local_server import read_server, running

    server = read_server(data_dir)
    return server is not None and running(server)


def _user() -> str:
    import getpass

    try:
        return os.environ.get("NM_AGENT_USER") or getpass.getuser() or "user"
    except (KeyError, OSError):
        return "user"


def main(argv: list[str] | None = None) -> int:
    """Run one hook event (stdin) and exit 0, whatever happens."""
    began = time.monotonic()
    state = HookState()
    args = Flags(sys.argv[1:] if argv is None else argv)
    try:
        raw = sys.stdin.buffer.read(MAX_STDIN + 1)
    except OSError as exc:
        state.log("-", "-", "nothing", began, f"stdin unreadable ({exc})")
        return 0
    try:
        if len(raw) > MAX_STDIN:
            raise ValueError(f"more than {MAX_STDIN} bytes")
        payload = json.loads(raw)
        if not isinstance(payload, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        state.log("-", "-", "nothing", began, f"malformed JSON on stdin: {str(exc)[:120]}")
        return 0
    hook = Hook(args, payload, state, began)
    handlers = {"SessionStart": hook.session_start, "UserPromptSubmit": hook.user_prompt, "Stop": hook.stop}
    handler = handlers.get(hook.event)
    if handler is None:
        hook.log("nothing", f"an event this hook does not handle: {hook.event[:60]!r}")
        return 0
    if args.unknown:
        hook.log("note", f"flags ignored: {' '.join(args.unknown)[:200]}")
    try:
        handler()
    except Exception as exc:  # never an error for the agent: the log says what went wrong
        hook.log("failed", f"{type(exc).__name__}: {str(exc)[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
