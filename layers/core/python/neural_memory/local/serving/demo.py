"""The demo workspace that ``serve`` sets up on first start: a key and the sample events."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from neural_memory.auth.keys import issue_key
from neural_memory.auth.roles import Caller
from neural_memory.local.ingest.files import expand, load_file

if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    from neural_memory.auth.base import KeyStore
    from neural_memory.models import ObservationIn
    from neural_memory.service import Service

DEMO_WORKSPACE = "demo"
KEY_FILE = "demo-api-key"
# Written once the samples are in: later starts leave the workspace as its users left it (a
# deleted sample stays deleted); `serve --reload-samples` (`make demo-reset`) loads them again.
SAMPLES_MARK = "demo-samples-loaded"


@dataclass
class Demo:
    """What the demo set-up did."""

    key: str | None
    key_file: Path
    created_key: bool
    loaded: int
    already: bool = False  # loaded by an earlier start, so not this time


def rebase(observations: list[ObservationIn], now: datetime) -> list[ObservationIn]:
    """Shift every ``occurredAt`` by the same amount so the newest is an hour ago: the samples keep
    their spacing and stay inside the 7-day window of collaborative observations."""
    if not observations:
        return []
    shift = (now - timedelta(hours=1)) - max(o.occurred_at for o in observations)
    return [o.model_copy(update={"occurred_at": o.occurred_at + shift}) for o in observations]


def ensure_demo(
    service: Service, keys: KeyStore, data_dir: Path, samples: Path | None, now: datetime, *, reload: bool = False
) -> Demo:
    """Create the demo key once (written to ``data_dir/demo-api-key``, mode 0600, for the README's
    curl examples; the server keeps only its hash) and load the samples into the demo workspace
    once (``reload``: again, with their times rebased to now)."""
    key_file = data_dir / KEY_FILE
    created = False
    if not keys.has_keys(DEMO_WORKSPACE):
        key = issue_key(keys, DEMO_WORKSPACE, now)
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(key + "\n")
        created = True
    key_text = key_file.read_text().strip() if key_file.exists() else None
    mark = data_dir / SAMPLES_MARK
    if samples is None or not samples.exists():
        return Demo(key=key_text, key_file=key_file, created_key=created, loaded=0)
    if mark.exists() and not reload:
        return Demo(key=key_text, key_file=key_file, created_key=created, loaded=0, already=True)
    observations = []
    for path in expand([samples]):
        for loaded in load_file(path):
            observations.extend(loaded.observations)
    if observations:
        # Written as the demo key (named after its workspace), so it may change and delete them.
        service.index(DEMO_WORKSPACE, rebase(observations, now), Caller(name=DEMO_WORKSPACE, role="admin"))
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    mark.write_text(f"{len(observations)} sample observations from {samples}, loaded {now.isoformat()}\n")
    mark.chmod(0o600)
    return Demo(key=key_text, key_file=key_file, created_key=created, loaded=len(observations))
