"""Issue 56: ``scrub`` reaches every field redaction reaches, on both stores. Records are written as
a version before this change kept them (prepared and written without redaction): a secret in an
id, a parent id, a supersedes link, a session id, an actor, a branch in metadata, a code ref's
path, and each of the evasions the detector used to miss in the content. One scrub leaves none of
them in the store; an id that held one is re-keyed to its derived id, which ``GET`` of the original
id finds; the command on a data folder leaves ``check`` clean and no secret in any file."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.ingest.prepare import prepare
from neural_memory.models import ObservationIn
from neural_memory.redaction.identifiers import stored_id
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.find import Find
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.sqlite.files import release
from neural_memory.stores.sqlite.store import SqliteStore
from opensearchpy import OpenSearch

from tests.helpers.pipeline import NOW
from tests.helpers.processes import cli
from tests.helpers.two_stores import svc  # noqa: F401 (the fixture, by name)

if TYPE_CHECKING:
    from pathlib import Path

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration

GHP = "ghp_" + "Rt5Yu7Io9Pa1Sd3Fg5Hj7Kl9Zx1Cv3Bn5Mm7Q"
AKIA = "AKIAWE4RT6YU8IO0PA2S"
XOXB = "xoxb-223456789012-2234567890123-Zb3Cd5Ef7Gh9Ij1Kl3Mn5Op7"
ANT = "sk-ant-api03-" + "Lk8Jh6Gf4Ds2Aq0Wz8Xs6Cd4Vf2Bg0Nh8Mj6Ki4Lo2Pq0Wz8Xs6Cd4Vf2Bg0Nh8Mj6Ki4Lo2" + "AA"
RANDOM = "tK9mQ2vR7xW4zP1nL8bC5fH3jD6gS0aE2yU9iO4r"
UPPER = "RUAXTEI7S4QPDPYP5EGTMY5BLJ0D1QYFG0UND11K"
PEM_BODY = "MIIEpAIBAAKCAQEA8Xp5EMAw0t39M+FEOt5vJoWiZzSyKyHZmIyRjYdznCJOyeaH"
ENCODED = "Hx7Qm2Zr9Lk4Vt8W"
SECRETS = (GHP, AKIA, XOXB, ANT, RANDOM, UPPER, PEM_BODY, ENCODED)
OLD_ID = f"note-{GHP}"


def _observations() -> list[ObservationIn]:
    evasions = (
        f"git add deploy/OPENAI_key_is_{ANT}.txt\nBILLING_CRED={RANDOM}\nMY_SERVICE_API_KEY={UPPER}\n"
        f"GET /v1/experts?q=postgres%3A%2F%2Fsvc%3A{ENCODED}%40db.internal%3A5432%2Fapp\n"
        f"-----BEGIN RSA\nPRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n"
    )
    notes: list[dict[str, Any]] = [
        {"id": "older", "source": "manual", "observationType": "decision", "occurredAt": NOW - timedelta(days=9),
         "title": "Older decision", "content": "Keep the deploy keys in the vault."},
        {"id": OLD_ID, "source": "manual", "observationType": "decision", "occurredAt": NOW - timedelta(days=2),
         "title": "Deploy credentials", "content": evasions, "actorName": f"ci {AKIA}",
         "sessionId": f"sess_{XOXB}", "parentId": f"parent-{GHP}", "supersedes": ["older"],
         "metadata": {"branch": f"fix/tmp_{ANT}"},
         "codeRefs": [{"repository": "acme/console", "paths": [f"deploy/OPENAI_key_is_{ANT}.txt"]}]},
    ]  # fmt: skip
    return [ObservationIn.model_validate(n) for n in notes]


def _write_unredacted(service: Service, workspace: str) -> None:
    """What a version before this change stored: prepared and written, no redaction."""
    config = service.settings
    items = [
        prepare(o, now=NOW, policy=config.tiers_of(workspace), ttl_days=config.collaborative_ttl_days,
                chunking=service.chunking)
        for o in _observations()
    ]  # fmt: skip
    service.embed_chunks(workspace, items)
    assert not service.store.write(workspace, items).failed


def _kept(service: Service, osmem_url: str | None) -> str:
    if isinstance(service.store, OpenSearchStore):
        client = OpenSearch(hosts=[osmem_url])
        return json.dumps(client.search(index="nm-test-ws-*", body={"query": {"match_all": {}}, "size": 1000}))
    assert isinstance(service.store, SqliteStore)
    conn = service.store._reader().conn
    tables = ("observations", "chunks", "chunks_fts", "metadata_terms")
    return json.dumps([list(map(str, row)) for table in tables for row in conn.execute(f"SELECT * FROM {table}")])


def test_one_scrub_takes_every_secret_out_of_every_field_and_rekeys_an_id_that_held_one(
    svc: Service,  # noqa: F811 (the fixture)
    request: pytest.FixtureRequest,
) -> None:
    osmem = request.getfixturevalue("osmem_url") if isinstance(svc.store, OpenSearchStore) else None
    _write_unredacted(svc, "acme")
    before = _kept(svc, osmem)
    assert [s for s in SECRETS if s in before] == list(SECRETS)  # stored verbatim, as before this change
    report = svc.scrub()
    assert (report.finished, report.scanned, report.redacted) == (True, 2, 1)
    kept = _kept(svc, osmem)
    assert [s for s in SECRETS if s in kept] == []
    note = svc.get("acme", OLD_ID, "r")  # the original id still finds it
    assert note.id == stored_id(OLD_ID) != OLD_ID
    assert note.session_id == stored_id(f"sess_{XOXB}")
    assert note.parent_id == stored_id(f"parent-{GHP}")
    fields = {r.field for r in note.redactions or []}
    assert fields >= {"id", "actorName", "sessionId", "parentId", "content", "metadata.branch", "codeRefs"}
    assert sorted(r.id for r in svc.store.find("acme", Find())) == sorted(["older", stored_id(OLD_ID)])
    again = svc.scrub()
    assert (again.finished, again.redacted, again.scanned) == (True, 0, 2)


def test_the_command_cleans_a_folder_written_before_and_check_passes(
    tmp_path: Path, embedder: OnnxLocalEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path)
    service = Service(SqliteStore(settings.sqlite_path), embedder, settings, clock=lambda: NOW)
    _write_unredacted(service, "demo")
    service.close()
    release(settings.sqlite_path)
    files = b"".join(f.read_bytes() for f in tmp_path.rglob("*") if f.is_file())
    assert all(s.encode() in files for s in SECRETS)
    done = cli("scrub", "--data-dir", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "scanned 2 observations; 1 had a secret redacted" in done.stdout, done.stdout
    checked = cli("check", "--data-dir", str(tmp_path))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    leaks = {f.name: [s for s in SECRETS if s.encode() in f.read_bytes()] for f in tmp_path.rglob("*") if f.is_file()}
    assert {name: found for name, found in leaks.items() if found} == {}
