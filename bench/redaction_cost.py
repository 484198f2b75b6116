"""What redaction and vetting cost a write: the redaction step (``redaction.observations.redact_all``)
and the search for instruction-like text (``trust.instructions.flags_of``, what ``trust.vetting``
runs on each observation) against the whole ``Service.index`` they run in (validation aside:
tiering, chunking, embedding with the local model, the SQLite/FTS5 write), on the same batches,
interleaved in one process so that a busy machine slows all alike.

    python -m bench.redaction_cost [--count 3000] [--batch 64] [--history PATH --repo owner/name]

Two kinds of text: the short synthetic observations of ``bench.ingest_throughput`` (a title and one
sentence, the commit-line case), and, with ``--history``, the observations ``import git`` makes of a
real clone (pushes listing commit subjects and files, merged PRs with their commits' messages and
the code they changed: the long-text case). Prints, per kind, the median time of one batch of each
step and each step's share of the write (issue 44's bound for redaction: 10 %).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

from neural_memory.clock import utcnow
from neural_memory.redaction.observations import redact_all
from neural_memory.runtime import build_service
from neural_memory.settings import Settings
from neural_memory.trust.instructions import flags_of

from bench.synthetic import observations

if TYPE_CHECKING:
    from neural_memory.models import ObservationIn


def _history(path: str, repo: str | None, limit: int) -> list[ObservationIn]:
    from neural_memory.local.history.git import GitHistory
    from neural_memory.local.ingest.files import load_document

    found: list[ObservationIn] = []
    for origin, document in GitHistory(Path(path), repo=repo).events():
        found += load_document(document, origin).observations
        if len(found) >= limit:
            break
    return found[:limit]


def _measure(label: str, items: list[ObservationIn], batch: int) -> None:
    redacting, vetting, writing = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        service = build_service(Settings(data_dir=Path(tmp)))
        assert service.embedder is not None
        service.embedder.embed(["warm up"], "search_document")
        redact_all(items[:batch], "redact")  # the library loads on first use
        for start in range(0, len(items), batch):
            part = items[start : start + batch]
            began = time.perf_counter()
            redact_all(part, "redact")
            redacting.append(time.perf_counter() - began)
            began = time.perf_counter()
            for observation in part:
                flags_of(f"{observation.title}\n{observation.content}")
            vetting.append(time.perf_counter() - began)
            began = time.perf_counter()
            service.index("bench", part)  # redacts and vets again inside: the shares are of the whole write
            writing.append(time.perf_counter() - began)
        service.close()
    chars = sum(len(o.title or "") + len(o.content) for o in items) / len(items)
    share, vetted = sum(redacting) / sum(writing), sum(vetting) / sum(writing)
    print(
        f"{label}: {len(items)} observations ({chars:.0f} characters each on average), batches of {batch}: "
        f"redaction median {statistics.median(redacting) * 1000:.1f} ms, vetting median "
        f"{statistics.median(vetting) * 1000:.1f} ms, the write median {statistics.median(writing) * 1000:.1f} ms a "
        f"batch; redaction is {share:.1%} of the write, vetting {vetted:.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--history", help="a clone whose history import git would bring in")
    parser.add_argument("--repo", help="its owner/name, when the origin does not say")
    args = parser.parse_args()
    now = utcnow()
    short = [
        o.model_copy(update={"content": " ".join(o.content.split()[: 8 + i % 8]) + f" (#{i})"})
        for i, o in enumerate(observations(args.count, seed=11, now=now))
    ]
    _measure("short synthetic", short, args.batch)
    if args.history:
        _measure(f"history of {args.history}", _history(args.history, args.repo, args.count), args.batch)


if __name__ == "__main__":
    main()
