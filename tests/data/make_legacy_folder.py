"""Writes the data folder ``legacy_folder.tar.gz`` holds, with the code of main before key names,
roles and ``createdBy`` (commit 94c0e3f): a key of workspace ``acme`` (in ``key.txt``) and two
observations it stored through the API's handlers. Run it from a checkout of that commit:

    git worktree add --detach /tmp/main-ref 94c0e3f
    PYTHONPATH=/tmp/main-ref/layers/core/python .venv/bin/python tests/data/make_legacy_folder.py OUT
    tar -C OUT -czf tests/data/legacy_folder.tar.gz .
"""

from __future__ import annotations

import sys
from pathlib import Path

from neural_memory.auth.keys import issue_key
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.clock import utcnow
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.runtime import build_service, set_service
from neural_memory.settings import Settings


def main(folder: Path) -> None:
    settings = Settings(data_dir=folder)
    service = build_service(settings)
    set_service(service)
    keys = SqliteKeyStore(settings.sqlite_path)
    key = issue_key(keys, "acme", utcnow())
    gateway = LocalGateway(keys, concurrency=1)
    body = (
        '{"observations": [{"id": "old-decision", "source": "manual", "observationType": "decision", '
        '"actorName": "ana", "occurredAt": "2026-11-02T09:00:00Z", "title": "Pin the payments SDK at 4.2", '
        '"content": "We pin the payments SDK at 4.2 because 4.3 broke partial refunds."}, '
        '{"id": "old-note", "source": "manual", "observationType": "note", "occurredAt": "2026-11-03T09:00:00Z", '
        '"content": "Deploys go out on Tuesdays after the stand-up."}]}'
    )
    reply = gateway.dispatch("POST", "/v1/observations", {"Authorization": f"Bearer {key}"}, body.encode())
    assert reply.status == 200, reply
    (folder / "key.txt").write_text(key + "\n")
    keys.close()
    service.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
