"""What the hook keeps between its runs, in one folder on this machine: the log (``hooks.log``:
one line per run saying what it did or why it did nothing; never a prompt's or a memory's text),
the prompt of the turn under way (``UserPromptSubmit`` stashes it for ``Stop``, private spans
removed and secrets replaced before it touches the disk), the ids of the memories each session
was shown (its model has them in context: a later prompt's recall names them rather than
repeating them), the ledger of the turns each project's sessions captured (where a session left
off, for the next one's brief), and the outbox of turns a capture could not deliver (sent with
the next capture, so nothing is lost while the memory is down; their secrets already replaced:
``outbox_redaction.without_secrets``).

The folder is ``NM_HOOK_STATE_DIR``, else ``$XDG_STATE_HOME/neural-memory``, else
``~/.local/state/neural-memory``; it and its files are private to the user (0700 / 0600). Paths
are strings (``os.path``): ``pathlib`` would cost every prompt's hook more than this module does."""

from __future__ import annotations

import contextlib
import json
import os
import time
from datetime import UTC, datetime
from typing import Any

LOG_FILE = "hooks.log"
LOG_LIMIT = 1_000_000  # bytes: past it the log starts over (one older copy kept as hooks.log.1)
LEDGER_FILE = "sessions.jsonl"
LEDGER_LIMIT = 500  # lines kept
OUTBOX_FILE = "outbox.jsonl"
READ_ONLY_FILE = "read-only-keys"  # ids of keys whose writes the memory refused (403)
OUTBOX_LIMIT = 2_000  # observations kept undelivered at most (the oldest go first, and the log says so)
SHOWN_LIMIT = 1_000  # ids a session's list keeps (the newest)
SHOWN_DAYS = 7  # a session's list untouched this long is removed (the session is over)
STASHING = ".stashing"  # beside a pending prompt's file while its secrets are being replaced
STASH_WAIT_S = 3.0  # how long a Stop waits for that at most (the detectors load in about 0.3 s)


def state_dir() -> str:
    """Where the hook keeps its files (the module's docstring)."""
    if chosen := os.environ.get("NM_HOOK_STATE_DIR"):
        return chosen
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "neural-memory")


class LeftOff:
    """The last turn a previous session of a project captured: its ids and when. (A plain class:
    ``dataclasses`` costs a hook's start more than the class does.)"""

    __slots__ = ("at", "ids", "session_id")

    def __init__(self, session_id: str, ids: list[str], at: str) -> None:
        self.session_id = session_id
        self.ids = ids
        self.at = at


class HookState:
    """The state folder, created on first use."""

    def __init__(self, folder: str | None = None) -> None:
        self.folder = folder or state_dir()

    def path(self, name: str) -> str:
        """A file of the folder (the folder created if it is not there yet)."""
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        return os.path.join(self.folder, name)

    def _write(self, path: str, text: str, append: bool = False) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC), 0o600)
        with os.fdopen(fd, "a" if append else "w", encoding="utf-8") as handle:
            handle.write(text)

    # The log -------------------------------------------------------------------------------
    def log(self, event: str, session_id: str, outcome: str, began: float, detail: str = "") -> None:
        """One line: when, which event of which session, what came of it, how long it took, why."""
        with contextlib.suppress(OSError):
            path = self.path(LOG_FILE)
            if os.path.exists(path) and os.path.getsize(path) > LOG_LIMIT:
                os.replace(path, path + ".1")
            ms = (time.monotonic() - began) * 1000
            stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
            line = f"{stamp} {event or '-'} session={session_id or '-'} {outcome} {ms:.0f}ms"
            self._write(path, line + (f" {detail}" if detail else "") + "\n", append=True)

    def _of_session(self, kind: str, session_id: str) -> str:
        """The file of ``kind`` ("pending", "shown") for a session, its name made safe."""
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:120] or "unknown"
        return os.path.join(self.path(kind), f"{safe}.json")

    # The turn under way ----------------------------------------------------------------------
    def _pending(self, session_id: str) -> str:
        return self._of_session("pending", session_id)

    def stashing(self, session_id: str) -> None:
        """Say that the turn's prompt is being redacted for the stash (an empty marker file), so
        that a Stop arriving first waits for it (``take_prompt``)."""
        path = self._pending(session_id)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        self._write(path + STASHING, "")

    def stash_prompt(self, session_id: str, prompt_id: str, prompt: str) -> None:
        """Keep the turn's prompt (private spans removed and secrets replaced already: the hook's
        ``_stash``) for the Stop hook."""
        path = self._pending(session_id)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        at = datetime.now(UTC).isoformat()
        self._write(path, json.dumps({"promptId": prompt_id, "prompt": prompt, "at": at}))
        with contextlib.suppress(OSError):
            os.unlink(path + STASHING)

    def take_prompt(self, session_id: str) -> dict[str, Any] | None:
        """The stashed prompt of the session's turn, removed as it is read (None if there is none);
        while it is being stashed, waited for (``STASH_WAIT_S`` at most)."""
        path = self._pending(session_id)
        waited = time.monotonic() + STASH_WAIT_S
        while os.path.exists(path + STASHING) and time.monotonic() < waited:
            time.sleep(0.02)
        try:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError):
            return None
        with contextlib.suppress(OSError):
            os.unlink(path)
        return document if isinstance(document, dict) else None

    # What a session was shown --------------------------------------------------------------
    def shown(self, session_id: str) -> set[str]:
        """The ids of what the hooks put in front of the session's model so far (none when unknown;
        an event without a session id has no list: it is nobody's session)."""
        if not session_id:
            return set()
        try:
            with open(self._of_session("shown", session_id), encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError):
            return set()
        return {i for i in document if isinstance(i, str)} if isinstance(document, list) else set()

    def add_shown(self, session_id: str, ids: list[str]) -> None:
        """Note that the session's model was shown ``ids`` (its list keeps the newest ``SHOWN_LIMIT``).
        Not locked: a session's hooks run one prompt at a time, and a lost id costs a repeat only."""
        if not ids or not session_id:
            return
        with contextlib.suppress(OSError):
            path = self._of_session("shown", session_id)
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            try:
                with open(path, encoding="utf-8") as handle:
                    known = [i for i in json.load(handle) if isinstance(i, str)]
            except (OSError, ValueError, TypeError):
                known = []
            merged = list(dict.fromkeys([*known, *ids]))[-SHOWN_LIMIT:]
            partial = f"{path}.{os.getpid()}"
            self._write(partial, json.dumps(merged))
            os.replace(partial, path)  # a prompt's hook reading it never sees half a list

    def forget_shown(self, session_id: str) -> None:
        """The session's context was cleared or compacted: what it was shown is no longer in it.
        Lists of sessions over for ``SHOWN_DAYS`` go too."""
        if session_id:
            with contextlib.suppress(OSError):
                os.unlink(self._of_session("shown", session_id))
        folder = os.path.join(self.folder, "shown")
        cutoff = time.time() - SHOWN_DAYS * 86400
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                with contextlib.suppress(OSError):
                    if os.path.getmtime(os.path.join(folder, name)) < cutoff:
                        os.unlink(os.path.join(folder, name))

    # Where sessions left off -----------------------------------------------------------------
    def record_turn(self, project: str, session_id: str, ids: list[str]) -> None:
        """Note that ``session_id`` of ``project`` captured the turn ``ids``."""
        with contextlib.suppress(OSError):
            path = self.path(LEDGER_FILE)
            entry = {"project": project, "sessionId": session_id, "ids": ids, "at": datetime.now(UTC).isoformat()}
            self._write(path, json.dumps(entry) + "\n", append=True)
            lines = _lines(path)
            if len(lines) > LEDGER_LIMIT:
                self._write(path, "\n".join(lines[-LEDGER_LIMIT:]) + "\n")

    def left_off(self, project: str, exclude_session: str, sessions: int) -> list[LeftOff]:
        """The last captured turn of each of the project's latest ``sessions`` other sessions, newest first."""
        lines = _lines(os.path.join(self.folder, LEDGER_FILE))
        last: dict[str, LeftOff] = {}
        for line in lines:
            try:
                entry = json.loads(line)
                if entry["project"] == project and entry["sessionId"] != exclude_session:
                    last.pop(entry["sessionId"], None)  # a session's newest turn goes to the end
                    last[entry["sessionId"]] = LeftOff(entry["sessionId"], list(entry["ids"]), entry["at"])
            except (ValueError, KeyError, TypeError):
                continue
        return list(reversed(list(last.values())))[:sessions]

    # Turns not yet delivered -----------------------------------------------------------------
    # A key that may not write -------------------------------------------------------------
    def read_only(self, key: str) -> bool:
        """Whether the memory refused this key's writes (a ``read`` key): its turns are not captured."""
        return _key_id(key) in _lines(os.path.join(self.folder, READ_ONLY_FILE))

    def note_read_only(self, key: str) -> None:
        """Remember that this key's writes are refused (its id only, never the key)."""
        with contextlib.suppress(OSError):
            self._write(self.path(READ_ONLY_FILE), _key_id(key) + "\n", append=True)

    def keep(self, observations: list[dict[str, Any]]) -> int:
        """Make the outbox exactly ``observations`` (those not delivered, oldest first); how many
        were dropped (the oldest) to stay within its limit."""
        dropped = max(0, len(observations) - OUTBOX_LIMIT)
        self._write(self.path(OUTBOX_FILE), "".join(json.dumps(o) + "\n" for o in observations[dropped:]))
        return dropped

    def held(self) -> list[dict[str, Any]]:
        """The observations waiting in the outbox, oldest first."""
        found = []
        for line in _lines(os.path.join(self.folder, OUTBOX_FILE)):
            with contextlib.suppress(ValueError):
                if isinstance(document := json.loads(line), dict):
                    found.append(document)
        return found

    def clear_outbox(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self.folder, OUTBOX_FILE))


def _key_id(key: str) -> str:
    """A key's public id (``nm_<id>_<secret>``), so the folder never holds a secret."""
    parts = key.split("_")
    return parts[1] if len(parts) >= 3 and parts[0] == "nm" else "unknown"


def _lines(path: str) -> list[str]:
    """The lines of a text file ([] when there is none)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().splitlines()
    except OSError:
        return []
