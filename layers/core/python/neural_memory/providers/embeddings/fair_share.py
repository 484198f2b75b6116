"""Fair share of document embedding between workspaces.

Embedding is the one expensive step of a write, and a server does it on a few background threads.
Served first come, first served, one workspace posting large observations as fast as it may
queued every other workspace's writes behind its own (a one-observation write waited 137 s, then
1,183 s). Here each workspace has its own queue and the threads serve the workspaces in turn, one
small batch at a time: a write waits behind at most one batch per other busy workspace, whatever
they have queued. We chose turns over refusing (429 with ``Retry-After`` per request or per
workspace) because turns need no limit tuned to the machine, never refuse a legitimate large
import, and bound every workspace's wait by the number of workspaces writing at once, not by
how much they send; how much one observation may cost is bounded separately
(``ingest.chunking.MAX_EMBEDDED_PASSAGES``).

The workspace is the one ``Service.embed_documents`` names (``for_workspace``); an embedding
outside it (a reindex, a CLI ingest) shares one queue.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from neural_memory.models import Vector

# Texts embedded in one turn: small, so a workspace's turn comes round within tens of milliseconds.
TURN_TEXTS = 8
_WORKSPACE: ContextVar[str] = ContextVar("embedding_workspace", default="")


@contextmanager
def for_workspace(workspace_id: str) -> Iterator[None]:
    """Document embeddings asked for in this block are queued as ``workspace_id``'s."""
    token = _WORKSPACE.set(workspace_id)
    try:
        yield
    finally:
        _WORKSPACE.reset(token)


@dataclass
class _Job:
    """One caller's texts, cut into turns; the caller waits on ``done``."""

    texts: list[str]
    turns: deque[tuple[int, int]]
    out: list[Vector]
    pending: int
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


class FairQueue:
    """Per-workspace queues of embedding turns, served in turn by ``workers`` threads that run
    ``embed`` on each turn's texts (after ``initializer``, once per thread)."""

    def __init__(
        self,
        workers: int,
        embed: Callable[[list[str]], list[Vector]],
        initializer: Callable[[], None] | None = None,
    ) -> None:
        self._workers = workers
        self._embed = embed
        self._initializer = initializer
        self._ready = threading.Condition()
        self._queues: OrderedDict[str, deque[_Job]] = OrderedDict()  # in serving order
        self._started = False

    def embed(self, texts: list[str]) -> list[Vector]:
        """Vectors for ``texts``, in order; the calling thread waits for its turns."""
        if not texts:
            return []
        turns = deque((i, min(i + TURN_TEXTS, len(texts))) for i in range(0, len(texts), TURN_TEXTS))
        job = _Job(texts, turns, [[] for _ in texts], len(turns))
        with self._ready:
            self._start()
            self._queues.setdefault(_WORKSPACE.get(), deque()).append(job)
            self._ready.notify_all()
        job.done.wait()
        if job.error is not None:
            raise job.error
        return job.out

    def _start(self) -> None:
        if self._started:
            return
        self._started = True
        for n in range(self._workers):
            threading.Thread(target=self._serve, name=f"nm-embed-documents-{n}", daemon=True).start()

    def _next(self) -> tuple[_Job, int, int]:
        """The next turn: of the workspace whose turn it is (its oldest job), which then goes last."""
        with self._ready:
            while not self._queues:
                self._ready.wait()
            workspace, jobs = self._queues.popitem(last=False)
            job = jobs[0]
            start, end = job.turns.popleft()
            if not job.turns:
                jobs.popleft()
            if jobs:
                self._queues[workspace] = jobs  # back of the line
            return job, start, end

    def _serve(self) -> None:
        if self._initializer is not None:
            self._initializer()
        while True:
            job, start, end = self._next()
            try:
                vectors = self._embed(job.texts[start:end]) if job.error is None else []
                job.out[start:end] = vectors
            except Exception as exc:  # the caller's failure: raised in its thread
                job.error = exc
            with self._ready:
                job.pending -= 1
                finished = job.pending == 0
            if finished:
                job.done.set()
