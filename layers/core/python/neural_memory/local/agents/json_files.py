"""The JSON files ``agents install`` edits, written as their owner wrote them: a change keeps the
file's indentation (spaces or tabs, or one line), its characters and its final newline, and an
uninstall that takes out exactly what this machine's install put in gives back the very bytes the
file held before (kept in the hooks' state folder, ``installed-files.json``). A re-install that
changes nothing does not write at all: no whitespace diff in git either way."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from neural_memory.local.agents.hook_state import state_dir

LEDGER = "installed-files.json"


def read_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, None if there is no file; ``ValueError`` if it holds something else."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    document = json.loads(text) if text.strip() else {}
    if not isinstance(document, dict):
        raise ValueError(f"{path}: not a JSON object")
    return document


def _indent(text: str) -> int | str | None:
    """The indentation ``text`` uses: a number of spaces, a tab, or None for a file on one line."""
    lines = text.splitlines()
    if len(lines) < 2:
        return None if text.strip() else 2
    for line in lines[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            whitespace = line[: len(line) - len(stripped)]
            return "\t" if whitespace.startswith("\t") else len(whitespace)
    return 2


def render(document: dict[str, Any], like: str | None) -> str:
    """``document`` as text in the style of ``like`` (a file's text; None: two spaces)."""
    indent = 2 if like is None else _indent(like)
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    if indent is None:
        text = json.dumps(document, ensure_ascii=False)
    ends = like is None or like.endswith("\n")
    return text + ("\n" if ends else "")


def _ledger() -> Path:
    return Path(state_dir()) / LEDGER


def _key(path: Path) -> str:
    return hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]


def _load_ledger() -> dict[str, Any]:
    try:
        loaded = json.loads(_ledger().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _save_ledger(ledger: dict[str, Any]) -> None:
    path = _ledger()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(ledger), encoding="utf-8")
    os.chmod(temporary, 0o600)
    temporary.replace(path)


def write_object(
    path: Path, before: dict[str, Any] | None, after: dict[str, Any], private: bool = False, installing: bool = True
) -> str:
    """Write ``after`` over ``before`` (removing the file when it is empty), in the file's own
    style; what happened to the file: created, updated, unchanged or removed."""
    if before == after or (before is None and not after):
        return "unchanged"
    old = path.read_text(encoding="utf-8") if before is not None else None
    ledger = _load_ledger()
    key = _key(path)
    kept = ledger.get(key)
    if not after:
        path.unlink()
        if ledger.pop(key, None) is not None:
            _save_ledger(ledger)
        return "removed"
    text = render(after, old)
    if not installing and isinstance(kept, dict) and kept.get("after") == old and kept.get("before") is not None:
        with_original = kept["before"]
        try:
            if json.loads(with_original) == after:  # exactly what the install added is taken out
                text = with_original
        except ValueError:
            pass
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    if private:
        temporary.chmod(0o600)
    elif path.exists():
        temporary.chmod(path.stat().st_mode & 0o777)
    temporary.replace(path)
    if installing and old is not None:
        original = kept["before"] if isinstance(kept, dict) and kept.get("after") == old else old
        ledger[key] = {"before": original, "after": text}
        _save_ledger(ledger)
    elif not installing and ledger.pop(key, None) is not None:
        _save_ledger(ledger)
    return "created" if before is None else "updated"
