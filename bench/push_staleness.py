"""What one GitHub push write costs once many earlier pushes name its paths (issue #27, item 3):
pushes written one by one into the embedded store (no embedder: a push is tier E, lexical only),
each touching ``package.json`` (as a lockfile is, by every push) and a file of its own; at each
checkpoint, the next ``--timed`` writes are timed through ``Service.index`` (staleness marks
included) and their median and max printed.

    python -m bench.push_staleness [--checkpoints 10 100 500 1000 2000] [--timed 20]

It uses only the service's API, so it measures any revision (``PYTHONPATH`` to its layer).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")  # EMF lines would flood the terminal

from neural_memory.models import ObservationIn
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.base import read_one
from neural_memory.stores.sqlite.store import SqliteStore

from bench.log_sink import discard_log_output

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def push(n: int) -> ObservationIn:
    """The n-th push (one minute after the previous one), as the GitHub normalizer writes it."""
    sha = f"{n:040x}"
    return ObservationIn.model_validate(
        {
            "id": f"github-push-acme.console-{n:012x}",
            "source": "github",
            "observationType": "push",
            "occurredAt": (START + timedelta(minutes=n)).isoformat(),
            "title": f"Push {n} to acme/console",
            "content": f"Commit {sha}: bump dependencies and edit src/module_{n}.ts",
            "metadata": {"repo": "acme/console", "commitSha": sha},
            "codeRefs": [{"repository": "acme/console", "paths": ["package.json", f"src/module_{n}.ts"]}],
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoints", type=int, nargs="+", default=[10, 100, 500, 1000, 2000])
    parser.add_argument("--timed", type=int, default=20)
    args = parser.parse_args()
    discard_log_output()  # a "search complete" line per search
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), embedder="none")
        store = SqliteStore(settings.sqlite_path)
        service = Service(store, None, settings, clock=lambda: START + timedelta(days=3))
        try:
            written = 0
            for checkpoint in sorted(args.checkpoints):
                while written < checkpoint:
                    service.index("acme", [push(written)])
                    written += 1
                times = []
                for _ in range(args.timed):
                    began = time.perf_counter()
                    service.index("acme", [push(written)])
                    times.append((time.perf_counter() - began) * 1000)
                    written += 1
                print(
                    f"{checkpoint:>6} pushes naming package.json: one push write median "
                    f"{statistics.median(times):.1f} ms, max {max(times):.1f} ms",
                    flush=True,
                )
            # The marks are right: each push is marked by the next (the earliest later one on package.json)
            for n in (0, written // 2, written - 2):
                record = read_one(store, "acme", f"github-push-acme.console-{n:012x}")
                assert record is not None and record.possibly_stale == f"{n + 1:040x}", (n, record)
        finally:
            store.close()


if __name__ == "__main__":
    main()
