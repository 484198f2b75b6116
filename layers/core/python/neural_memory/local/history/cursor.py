"""Where an import got to, so a re-run continues: a JSON file per source in
``<data-dir>/import-cursors/`` (``github-owner.repo.json``, ``vercel-project.json``,
``git-owner.repo-branch.json``: the last main-line commit written, dropped once an import ends).

An importer yields its documents with ``Checkpoint`` states between them; a state is saved only
once every document yielded before it was written (``Checkpointed``), so an interruption loses no
document: the re-run starts at the last saved state and writes some documents again (an update).
The cursor names the target it was made for (workspace or API): another target starts afresh.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path

    from neural_memory.local.history.sink import Sink
    from neural_memory.local.ingest.files import Loaded
    from neural_memory.local.ingest.runner import IngestReport

FOLDER = "import-cursors"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Checkpoint:
    """The importer's state once every document before it is written."""

    state: dict[str, Any]


class Cursor:
    """One source's saved state for one target; empty when there is none, it is another target's,
    or ``restart`` is asked."""

    def __init__(self, data_dir: Path, name: str, target: str, *, restart: bool = False) -> None:
        self.path = data_dir / FOLDER / f"{_UNSAFE.sub('.', name)}.json"
        self.target = target
        self.state: dict[str, Any] = {}
        if restart or not self.path.exists():
            return
        try:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # unreadable: start afresh (the import is idempotent)
        if isinstance(saved, dict) and saved.get("target") == target and isinstance(saved.get("state"), dict):
            self.state = saved["state"]

    def save(self, state: dict[str, Any]) -> None:
        """Write ``state`` atomically (a crash leaves the old cursor or the new one)."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"target": self.target, "state": state}, out, indent=2, sort_keys=True)
        os.replace(temporary, self.path)
        self.state = state

    def clear(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


class Checkpointed:
    """An importer's stream split into documents (for ``run_import``) and checkpoints, saved to
    ``cursor`` as the sink (``sink(...)``) reports their documents written."""

    def __init__(self, stream: Iterable[tuple[str, dict[str, Any]] | Checkpoint], cursor: Cursor) -> None:
        self._stream = stream
        self._cursor = cursor
        self._yielded = self._written = 0
        self._pending: deque[tuple[int, dict[str, Any]]] = deque()

    def documents(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for item in self._stream:
            if isinstance(item, Checkpoint):
                self._pending.append((self._yielded, copy.deepcopy(item.state)))
                continue
            self._yielded += 1
            yield item
        self.written(0)  # checkpoints after the last document

    def sink(self, inner: Sink) -> Sink:
        return _CheckpointSink(inner, self)

    def written(self, count: int) -> None:
        """``count`` more documents were written: save the last state they complete."""
        self._written += count
        done = None
        while self._pending and self._pending[0][0] <= self._written:
            done = self._pending.popleft()[1]
        if done is not None:
            self._cursor.save(done)


class _CheckpointSink:
    def __init__(self, inner: Sink, checkpoints: Checkpointed) -> None:
        self._inner = inner
        self._checkpoints = checkpoints
        self.report: IngestReport = inner.report  # the same report, counted by the inner sink

    def write(self, loaded: list[Loaded]) -> None:
        self._inner.write(loaded)
        self._checkpoints.written(len(loaded))
