"""Keys made before names and roles keep working unchanged: a data folder written by main's code
before them (``tests/data/legacy_folder.tar.gz``, made by ``tests/data/make_legacy_folder.py``: a
key of ``acme`` and two observations it stored) served by this version's real local server. The
old key is a ``write`` key named after its workspace, still changes and deletes what it stored,
and writes new observations under that name; ``keys create|list|revoke`` and ``audit`` run on it."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from neural_memory.local.cli import main

from tests.helpers.local_api import running_local_api

if TYPE_CHECKING:
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration

LEGACY = Path(__file__).parents[1] / "data" / "legacy_folder.tar.gz"


def _folder(tmp_path: Path) -> tuple[Path, str]:
    folder = tmp_path / "data"
    with tarfile.open(LEGACY) as archive:
        archive.extractall(folder, filter="data")
    return folder, (folder / "key.txt").read_text().strip()


def _call(url: str, key: str, method: str, path: str, body: Any = None) -> httpx.Response:
    content = None if body is None else json.dumps(body)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    return httpx.request(method, f"{url}{path}", content=content, headers=headers, timeout=60)


def test_a_key_from_before_roles_keeps_working_unchanged(tmp_path: Path, embedder: OnnxLocalEmbedder) -> None:
    # Given the data folder main wrote, and its key
    folder, key = _folder(tmp_path)
    with running_local_api(folder, embedder, None) as api:
        # When the old key searches, reads, changes and deletes what it stored, and writes anew
        found = _call(api.url, key, "POST", "/v1/search", {"query": "payments SDK pinned", "mode": "keyword"})
        old = _call(api.url, key, "GET", "/v1/observations/old-decision")
        changed = _call(
            api.url,
            key,
            "POST",
            "/v1/observations",
            {"observations": [{"id": "old-decision", "source": "manual", "observationType": "decision",
                               "occurredAt": "2026-11-02T09:00:00Z", "content": "We pin the SDK at 4.2.1 now."}]},
        )  # fmt: skip
        deleted = _call(api.url, key, "DELETE", "/v1/observations/old-note")
        new = _call(
            api.url,
            key,
            "POST",
            "/v1/observations",
            {"observations": [{"id": "new", "source": "manual", "observationType": "note",
                               "occurredAt": "2026-12-01T09:00:00Z", "content": "Staging moved to eu-west-1."}]},
        )  # fmt: skip
        new_read = _call(api.url, key, "GET", "/v1/observations/new").json()
        audit = _call(api.url, key, "GET", "/v1/audit")
    # Then all of it works as before; what it stored before has no createdBy, what it stores now its workspace's name
    assert [r["id"] for r in found.json()["results"]] == ["old-decision"]
    assert old.status_code == 200 and old.json()["createdBy"] is None
    assert changed.status_code == 200 and changed.json()["updated"] == 1
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True
    assert new.status_code == 200 and new_read["createdBy"] == "acme"
    # And it is a write key: the audit trail is an admin's
    assert audit.status_code == 403 and "needs a key with the admin role" in audit.json()["error"]["message"]


def test_keys_list_create_revoke_and_audit_on_the_old_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the data folder main wrote
    folder, key = _folder(tmp_path)
    data = ["--data-dir", str(folder)]
    # When its keys are listed, an admin key is made beside, and the old key revoked
    assert main(["keys", "list", *data]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert main(["keys", "create", "--workspace", "acme", "--name", "ops", "--role", "admin", *data]) == 0
    created = capsys.readouterr().out.splitlines()
    assert main(["keys", "create", "--workspace", "acme", "--name", "ops", *data]) == 2
    refused = capsys.readouterr().err
    assert main(["keys", "revoke", key.split("_")[1], *data]) == 0
    capsys.readouterr()
    assert main(["audit", "--workspace", "acme", "--json", *data]) == 0
    entries = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # Then the old key is listed as a write key named after its workspace (never the key itself)
    assert listed[0].split("\t") == ["id", "name", "role", "workspace", "created", "last used", "revoked"]
    row = listed[1].split("\t")
    assert row[:4] == [key.split("_")[1], "acme", "write", "acme"] and row[6] == "-"
    assert key not in "\n".join(listed)
    assert "'ops' (admin)" in created[0] and created[1].startswith("nm_")
    assert "already has a key named 'ops'" in refused
    # And the audit trail has the creation and the revocation, by the operator, newest first
    assert [(e["action"], e["key"]) for e in entries] == [("key.revoke", "system:cli"), ("key.create", "system:cli")]
    assert entries[0]["ids"] == [key.split("_")[1]]
