"""Ingest at speed on real history: ``import git`` of a real repository into a fresh embedded store.

    python -m bench.history_ingest PATH [--repo owner/name] [--since DATE] [--limit 5000] [--window 1000]

End to end, as ``neural-memory import git`` runs it (the real local model included): the clone's
history read (timed apart: "git read"), then every push and merged pull request built as it is
written, through the webhooks' normalizers and ``Service.index`` in batches, with the default
settings (pushes are E, never embedded; merged pull requests A, embedded by the local model).
Prints events/s over the whole import, the share of the import's time spent inside the embedding
model's calls (the rest: building payloads, normalizing, chunking, writing SQLite), and the
process's peak resident memory (the history is streamed: only the last ``--window`` events are
kept, for the comparison below). Then the seconds of the first and the last ``--window`` events,
and their ratio: a
per-event cost that grows with history shows as a ratio over 1 — and so does a history whose
later events are of costlier kinds (a decade of pushes before pull requests, which are embedded,
began): so it also imports the last window alone into an empty store (its own data folder, so
no embedding is cached) and prints the full store's time for it against that: the same events,
the store's growth alone.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import deque
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

from neural_memory.local.history.git import GitHistory
from neural_memory.local.history.progress import peak_rss_mb
from neural_memory.local.history.sink import EmbeddedSink, run_import
from neural_memory.runtime import build_service
from neural_memory.settings import Settings
from tqdm import tqdm

from bench.log_sink import discard_log_output

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from neural_memory.models import Vector
    from neural_memory.providers.embeddings.base import Embedder, InputType


class TimedEmbedder:
    """The service's embedder, with the seconds spent in its calls added up."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.texts = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[Vector]:
        began = time.perf_counter()
        try:
            return self.inner.embed(texts, input_type)
        finally:
            self.seconds += time.perf_counter() - began
            self.texts += len(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="a clone (work tree or bare) of a public repository")
    parser.add_argument("--repo", help="owner/name, when the clone's origin does not say")
    parser.add_argument("--since", help="only commits on or after this date (git's --since)")
    parser.add_argument("--limit", type=int, help="only the first N events (the oldest)")
    parser.add_argument("--window", type=int, default=1000, help="events in the first and last windows compared")
    args = parser.parse_args()
    discard_log_output()
    history = GitHistory(Path(args.path), repo=args.repo, since=args.since)
    read_began = time.perf_counter()
    total = min(history.prepare(), args.limit or 10**12)
    read_s = time.perf_counter() - read_began
    read_peak = peak_rss_mb()
    window = min(args.window, total // 2)
    tail: deque[tuple[str, dict[str, Any]]] = deque(maxlen=window)

    def events() -> Iterator[tuple[str, dict[str, Any]]]:
        for item in islice(history.events(), total):
            tail.append(item)
            yield item

    with tempfile.TemporaryDirectory() as tmp:
        service = build_service(Settings(data_dir=Path(tmp)))
        assert service.embedder is not None
        service.embedder.embed(["warm up"], "search_document")
        timed = TimedEmbedder(service.embedder)
        service.embedder = timed
        marks: list[tuple[int, float]] = []
        done = 0

        def progress(count: int) -> None:
            nonlocal done
            done += count
            marks.append((done, time.perf_counter()))
            bar.update(count)

        began = time.perf_counter()
        with tqdm(total=total, unit="event", desc="importing", file=sys.stderr) as bar:
            report = run_import(events(), EmbeddedSink(service, "bench"), progress=progress)
        elapsed = time.perf_counter() - began
        import_peak = peak_rss_mb()
        held = service.store.count("bench")
        service.close()
    with tempfile.TemporaryDirectory() as tmp:
        alone = build_service(Settings(data_dir=Path(tmp)))
        assert alone.embedder is not None
        alone.embedder.embed(["warm up"], "search_document")
        started = time.perf_counter()
        run_import(list(tail), EmbeddedSink(alone, "bench"))
        last_alone = time.perf_counter() - started
        alone.close()

    def at(count: int) -> float:
        """The time the import passed ``count`` events (batch ends, interpolated)."""
        previous = (0, began)
        for n, moment in marks:
            if n >= count:
                share = (count - previous[0]) / max(n - previous[0], 1)
                return previous[1] + share * (moment - previous[1])
            previous = (n, moment)
        return marks[-1][1]

    first = at(window) - began
    last = at(total) - at(total - window)
    print(
        f"{history.repo}: {total} events ({report.created} created, {report.updated} updated, "
        f"{len(report.skipped)} skipped, {len(report.failures)} failed; {held} held), git read {read_s:.1f} s"
    )
    print(f"import: {elapsed:.1f} s, {total / elapsed:.0f} events/s")
    print(
        f"model: {timed.seconds:.1f} s of the import's {elapsed:.1f} s ({100 * timed.seconds / elapsed:.0f} %), "
        f"{timed.texts} texts embedded"
    )
    print(f"peak RSS: {import_peak:.0f} MB (after reading the history: {read_peak:.0f} MB)")
    print(f"first {window}: {first:.2f} s, last {window}: {last:.2f} s, last/first {last / first:.2f}")
    print(
        f"last {window} into an empty store: {last_alone:.2f} s; into the store of the {total - window} before: "
        f"{last:.2f} s; growth {last / last_alone:.2f}"
    )


if __name__ == "__main__":
    main()
