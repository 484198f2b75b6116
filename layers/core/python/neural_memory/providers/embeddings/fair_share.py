"""Fair share of document embedding between workspaces, and interactive work before bulk.

Embedding is the one expensive step of a write, and a server does it on a few background threads.
Served first come, first served, one workspace posting large observations as fast as it may
queued every other workspace's writes behind its own (a one-observation write waited 137 s, then
1,183 s). Here each workspace has its own queue, a caller's texts are cut into slices of
``SLICE_TEXTS``, and the threads serve the workspaces in turn, one slice at a time: bulk work
waits behind at most one slice per other busy workspace, whatever they have queued.

Two classes of work (issue 58). **Interactive** work (a single write, a hook's turn: what a
person or an agent waits for, ``write_priority``) never queues: it is embedded at once on the
request's own thread, at normal priority, as a search's query is, while the document threads run
at a lower one (``onnx_local.DocumentWorkers``), so it waits behind no slice of any workspace,
its own bulk work included. Turned in slices, a quiet workspace's write still waited for the
slice under way and then for CPU at the threads' low priority: p95 ×5.0 of idle beside two bulk
clients, ×1.2 now (``bench.noisy_tenants``, docs/benchmarks.md). **Bulk** work (batches,
imports, reindexing) takes turns here.

We chose turns over refusing (429 with ``Retry-After`` per request or per workspace) because turns
need no limit tuned to the machine, never refuse a legitimate large import, and bound every
workspace's wait by the number of workspaces writing at once, not by how much they send; how much
one observation may cost is bounded separately (``ingest.chunking.MAX_EMBEDDED_PASSAGES``).

The workspace and class are the ones ``Service.embed_documents`` names (``for_workspace``); an
embedding outside it (a reindex, a CLI ingest) is bulk work of one shared queue.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from neural_memory.models import Vector

Priority = Literal["interactive", "bulk"]
# Texts embedded in one slice: small, so a workspace's turn comes round within tens of milliseconds.
SLICE_TEXTS = 8
# A write of at most this many observations is interactive: one observation, or a hook's turn
# (the prompt and the answer); more is a batch.
INTERACTIVE_OBSERVATIONS = 2
_WORKSPACE: ContextVar[str] = ContextVar("embedding_workspace", default="")
_PRIORITY: ContextVar[Priority] = ContextVar("embedding_priority", default="bulk")


def write_priority(observations: int) -> Priority:
    """The class of a write of ``observations`` observations."""
    return "interactive" if observations <= INTERACTIVE_OBSERVATIONS else "bulk"


@contextmanager
def for_workspace(workspace_id: str, priority: Priority = "bulk") -> Iterator[None]:
    """Document embeddings asked for in this block are ``workspace_id``'s, of class ``priority``."""
    token = _WORKSPACE.set(workspace_id)
    level = _PRIORITY.set(priority)
    try:
        yield
    finally:
        _PRIORITY.reset(level)
        _WORKSPACE.reset(token)


def current_priority() -> Priority:
    """The class of the embedding asked for now (``for_workspace``; bulk outside it)."""
    return _PRIORITY.get()


@dataclass
class _Job:
    """One caller's texts, cut into slices; the caller waits on ``done``."""

    texts: list[str]
    slices: deque[tuple[int, int]]
    out: list[Vector]
    pending: int
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


class FairQueue:
    """Per-workspace queues of embedding slices, served in turn by ``workers`` threads that run
    ``embed`` on each slice's texts (after ``initializer``, once per thread)."""

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
        """Vectors for ``texts``, in order; the calling thread waits for its slices."""
        if not texts:
            return []
        slices = deque((i, min(i + SLICE_TEXTS, len(texts))) for i in range(0, len(texts), SLICE_TEXTS))
        job = _Job(texts, slices, [[] for _ in texts], len(slices))
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
        """The next slice: of the workspace whose turn it is (its oldest job), which then goes last."""
        with self._ready:
            while not self._queues:
                self._ready.wait()
            workspace, jobs = self._queues.popitem(last=False)
            job = jobs[0]
            start, end = job.slices.popleft()
            if not job.slices:
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
