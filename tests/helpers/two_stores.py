"""The two-store fixture: ``svc``, a service over the SQLite store and over the OpenSearch store on
osmem-server (``osmem_url``), with the hashing test embedder. Test modules import it by name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.service import Service
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.opensearch.workspace_indices import WorkspaceIndices
from neural_memory.stores.sqlite.store import SqliteStore
from opensearchpy import OpenSearch

from tests.helpers.fakes import HashEmbedder
from tests.helpers.pipeline import NOW

if TYPE_CHECKING:
    from neural_memory.settings import Settings

INDEX = "nm-test"


@pytest.fixture(params=["sqlite", "opensearch"])
def svc(request: pytest.FixtureRequest, settings: Settings) -> Service:
    """A service over one store kind, with the hashing test embedder (64 dimensions)."""
    embedder = HashEmbedder()
    if request.param == "sqlite":
        store: Any = SqliteStore(settings.sqlite_path)
    else:
        client = OpenSearch(hosts=[request.getfixturevalue("osmem_url")])
        # The bootstrap's template: each workspace's index is created from it on its first write
        assert WorkspaceIndices(client, INDEX).put_template(embedder.dimension, embedder.model_id) == "template created"
        store = OpenSearchStore(client, INDEX, refresh="true")
    return Service(store, embedder, settings, clock=lambda: NOW)
