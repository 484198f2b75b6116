"""Redaction on both stores (SQLite and OpenSearch on osmem-server): what a store keeps holds no
secret (documents, chunks, files), a secret across a chunk boundary is gone whole, GET shows what
was redacted, and a workspace that refuses secrets gets a 400 naming the field and the kind with
nothing written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.sqlite.store import SqliteStore
from opensearchpy import OpenSearch

from tests.helpers.fakes import HashEmbedder
from tests.helpers.handlers import ingest
from tests.helpers.pipeline import NOW

if TYPE_CHECKING:
    from collections.abc import Iterator

    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration

GHP = "ghp_" + "Hk2Lq9Zx4Vb7Nm1Aa5Ss8Dd3Ff6Gg0Jj2Kk9P"
PASSWORD = "Zq8!mRt2vLp6"
SECRETS = (GHP, PASSWORD)


def _long_note(observation_id: str) -> dict[str, Any]:
    """A note long enough for many chunks, a secret wherever a window may end."""
    words = []
    for n in range(1, 900):
        words.append(f"word{n}")
        if n % 37 == 0:
            words.append(GHP if n % 2 else f"postgres://app:{PASSWORD}@db:5432/app")
    return {
        "id": observation_id,
        "source": "manual",
        "observationType": "note",
        "occurredAt": NOW.isoformat(),
        "title": f"Rotated {GHP}",
        "content": " ".join(words),
        "metadata": {"password": PASSWORD},
    }


def _stored_text(svc: Service, osmem_url: str | None) -> str:
    """Everything the store keeps, as text: every OpenSearch document, or every SQLite file's bytes."""
    store = svc.store
    if isinstance(store, OpenSearchStore):
        client = OpenSearch(hosts=[osmem_url])
        found = client.search(index="nm-test-ws-*", body={"query": {"match_all": {}}, "size": 1000})
        return str(found)
    assert isinstance(store, SqliteStore)
    folder = svc.settings.data_dir
    return "".join(f.read_bytes().decode("latin-1") for f in folder.rglob("*") if f.is_file())


def test_no_store_keeps_a_secret_and_get_says_what_was_redacted(
    svc: Service, request: pytest.FixtureRequest, lambda_context: LocalLambdaContext
) -> None:
    set_service(svc)
    try:
        status, reply = ingest({"observations": [_long_note("long-leak")]}, lambda_context)
    finally:
        set_service(None)
    assert (status, reply["redacted"]) == (200, 1), reply
    out = svc.get("acme", "long-leak", "req")
    assert GHP not in out.title and "[redacted:github-token]" in out.title
    assert out.content.count("[redacted:github-token]") == 12 and out.content.count("[redacted:url-password]") == 12
    assert out.metadata == {"password": "[redacted:credential]"}
    assert {(r.field, r.kind) for r in out.redactions or []} == {
        ("title", "github-token"),
        ("content", "github-token"),
        ("content", "url-password"),
        ("metadata.password", "credential"),
    }
    osmem = request.getfixturevalue("osmem_url") if isinstance(svc.store, OpenSearchStore) else None
    kept = _stored_text(svc, osmem)
    assert "word500" in kept  # the content is there, in its chunks
    for secret in SECRETS:
        # Nor any piece of it a chunk boundary could have cut off
        assert [secret[i : i + 8] for i in range(len(secret) - 7) if secret[i : i + 8] in kept] == []


@pytest.fixture
def refusing(settings: Settings) -> Iterator[Service]:
    strict = settings.model_copy(update={"workspace_secrets_policy": {"acme": "refuse"}})
    service = Service(SqliteStore(strict.sqlite_path), HashEmbedder(), strict)
    set_service(service)
    yield service
    set_service(None)
    service.close()


def test_a_workspace_that_refuses_secrets_gets_a_400_naming_the_field_and_kind_and_nothing_is_written(
    refusing: Service, lambda_context: LocalLambdaContext
) -> None:
    clean = {
        "id": "clean",
        "source": "manual",
        "observationType": "note",
        "occurredAt": NOW.isoformat(),
        "content": "ok",
    }
    leaking = {**clean, "id": "leaking", "content": f"use {GHP}"}
    status, reply = ingest({"observations": [clean, leaking]}, lambda_context)
    assert status == 400, reply
    assert reply["error"]["code"] == "secret_refused"
    assert reply["error"]["details"][0]["field"] == "observations.1.content"
    assert "github-token" in reply["error"]["message"] and GHP not in str(reply)
    assert refusing.store.count("acme") == 0
    # Another workspace keeps the default: redact
    status, reply = ingest({"observations": [leaking]}, lambda_context, workspace="other")
    assert (status, reply["redacted"]) == (200, 1)
