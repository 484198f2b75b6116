"""The real local API (waitress, the gateway, the handlers, SQLite, the local model) on an
ephemeral loopback port, set up as ``neural-memory serve`` does on first start."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from neural_memory.auth.keys import issue_key
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.local.serving.demo import ensure_demo
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.local.serving.server import LocalApiServer
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.events import NOW

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.auth.roles import Role
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder


@dataclass
class RunningApi:
    """Where the server listens, the demo workspace's key, and the stores behind it."""

    url: str
    key: str
    loaded: int
    service: Service
    keys: SqliteKeyStore

    def key_for(self, workspace: str, name: str | None = None, role: Role = "write") -> str:
        """A new API key for ``workspace`` (as ``neural-memory keys create`` makes one), named
        ``name`` (the workspace's name when not given) with ``role``."""
        return issue_key(self.keys, workspace, NOW, name=name, role=role)


@contextmanager
def running_local_api(
    data_dir: Path, embedder: OnnxLocalEmbedder, samples: Path | None, **settings: Any
) -> Iterator[RunningApi]:
    """The server over a store in ``data_dir`` with the ``demo`` workspace (and ``samples`` in
    it), installed as the process's service, until the block ends; ``settings``: others than the
    defaults (webhook secrets and routes)."""
    config = Settings(data_dir=data_dir, **settings)
    store = SqliteStore(config.sqlite_path)
    service = Service(store, embedder, config, clock=lambda: NOW)
    set_service(service)
    keys = SqliteKeyStore(config.sqlite_path)
    demo = ensure_demo(service, keys, config.data_dir, samples, NOW)
    assert demo.key is not None
    httpd = LocalApiServer(("127.0.0.1", 0), LocalGateway(keys), config.max_body_bytes, True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield RunningApi(httpd.url, demo.key, demo.loaded, service, keys)
    finally:
        httpd.shutdown()
        httpd.server_close()
        set_service(None)
        store.close()
