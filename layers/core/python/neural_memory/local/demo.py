"""The demo workspace that ``serve`` sets up on first start: a key and the sample events."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from neural_memory.auth.keys import issue_key
from neural_memory.ingest.files import expand, load_file

if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    from neural_memory.auth.base import KeyStore
    from neural_memory.models import ObservationIn
    from neural_memory.service import Service

DEMO_WORKSPACE = "demo"
KEY_FILE = "demo-api-key"


@dataclass
class Demo:
    """What the demo set-up did."""

    key: str | None
    key_file: Path
    created_key: bool
    loaded: int


def rebase(observations: list[ObservationIn], now: datetime) -> list[ObservationIn]:
    """Shift every ``occurredAt`` by the same amount so the newest is an hour ago: the samples keep
    their spacing and stay inside the 7-day window of collaborative observations."""
    if not observations:
        return []
    shift = (now - timedelta(hours=1)) - max(o.occurred_at for o in observations)
    return [o.model_copy(update={"occurred_at": o.occurred_at + shift}) for o in observations]


def ensure_demo(service: Service, keys: KeyStore, data_dir: Path, samples: Path | None, now: datetime) -> Demo:
    """Create the demo key once (written to ``data_dir/demo-api-key``, mode 0600, for the README's
    curl examples; the server keeps only its hash) and (re)load the samples, idempotently."""
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
    observations = []
    if samples is not None and samples.exists():
        for path in expand([samples]):
            for loaded in load_file(path):
                observations.extend(loaded.observations)
    if observations:
        service.index(DEMO_WORKSPACE, rebase(observations, now))
    return Demo(key=key_text, key_file=key_file, created_key=created, loaded=len(observations))
