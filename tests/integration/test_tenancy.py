"""A key of one workspace can never search, read or delete another workspace's observations."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from neural_memory.auth.keys import issue_key
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.clock import utcnow
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.providers.embeddings.cache import EmbeddingCache
from neural_memory.service import Service
from neural_memory.stores.base import read_one
from neural_memory.stores.sqlite.store import SqliteStore

from functions.observations import app as observations_app
from tests.helpers.events import load_event
from tests.helpers.fakes import HashEmbedder
from tests.helpers.handlers import call
from tests.helpers.pipeline import note

if TYPE_CHECKING:
    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration


def test_workspace_isolation_for_search_get_and_delete(service: Service, lambda_context: LocalLambdaContext) -> None:
    # Given observations in workspace "acme" and a key for workspace "rival"
    status, _ = call(observations_app, load_event("api/observations_post"), lambda_context)
    assert status == 200
    keys = SqliteKeyStore(service.settings.sqlite_path)
    acme_key = issue_key(keys, "acme", utcnow())
    rival_key = issue_key(keys, "rival", utcnow())
    gateway = LocalGateway(keys)

    def send(method: str, path: str, key: str, body: bytes = b"") -> tuple[int, str]:
        reply = gateway.dispatch(method, path, {"Authorization": f"Bearer {key}"}, body)
        return reply.status, reply.body

    search_body = b'{"query": "deploy failed", "topK": 100, "filters": {"sourceTypes": ["manual", "agent", "github"]}}'
    # When rival searches, reads and deletes acme's ids
    status, found = send("POST", "/v1/search", rival_key, search_body)
    assert status == 200 and '"results":[]' in found
    assert send("GET", "/v1/observations/note-deploy-env-vars", rival_key)[0] == 404
    assert send("DELETE", "/v1/observations/note-deploy-env-vars", rival_key)[0] == 404
    # Then acme still has everything, and rival's own writes stay in rival
    status, found = send("POST", "/v1/search", acme_key, search_body)
    assert status == 200 and "note-deploy-env-vars" in found
    assert send("GET", "/v1/observations/note-deploy-env-vars", acme_key)[0] == 200
    assert service.store.count("acme") == 5 and service.store.count("rival") == 0


def test_the_store_itself_scopes_every_read_by_workspace(service: Service, lambda_context: LocalLambdaContext) -> None:
    # Given acme's observations
    call(observations_app, load_event("api/observations_post"), lambda_context)
    # When the store is asked for them under another workspace
    # Then it finds nothing and deletes nothing
    assert read_one(service.store, "rival", "note-deploy-env-vars") is None
    assert service.store.delete("rival", "note-deploy-env-vars") is False
    assert read_one(service.store, "acme", "note-deploy-env-vars") is not None


def test_one_workspace_cannot_learn_from_the_embedding_cache_what_another_stored(settings: Settings) -> None:
    # Given acme's note, embedded once (the cache keeps its vector)
    embedder = HashEmbedder()
    service = Service(
        SqliteStore(settings.sqlite_path),
        embedder,
        settings,
        embedding_cache=EmbeddingCache(settings.embedding_cache_path),
    )
    secret = note("s1", "Initech acquisition", "We plan to acquire Initech in March.")
    service.index("acme", [secret])
    # When rival ingests the very same text, Then the embedder runs for it (no cache hit, so no
    # faster reply to tell rival that acme holds this text); acme's own re-ingest hits the cache
    calls = len(embedder.calls)
    service.index("rival", [secret])
    assert len(embedder.calls) == calls + 1
    service.index("acme", [secret])
    assert len(embedder.calls) == calls + 1
