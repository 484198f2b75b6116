"""API keys: hashed at rest, one workspace per key, constant-time check, revocation."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
from neural_memory.auth.keys import authenticate, extract_api_key, issue_key, revoke
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.errors import Unauthorized

if TYPE_CHECKING:
    from pathlib import Path

NOW = datetime(2025, 12, 14, tzinfo=UTC)


@pytest.fixture
def keys(tmp_path: Path) -> SqliteKeyStore:
    return SqliteKeyStore(tmp_path / "db.sqlite3")


def test_key_resolves_to_its_workspace_and_is_stored_hashed(keys: SqliteKeyStore, tmp_path: Path) -> None:
    # Given a key issued for a workspace
    key = issue_key(keys, "acme", NOW)
    # When it is presented
    workspace = authenticate(keys, key)
    # Then it resolves, and the database holds no trace of the secret
    assert workspace == "acme"
    dump = "\n".join(sqlite3.connect(tmp_path / "db.sqlite3").iterdump())
    assert key.split("_", 2)[2] not in dump and key not in dump  # the secret may hold "_" itself


@pytest.mark.parametrize("presented", [None, "", "nm_000000000000_" + "a" * 43, "Bearer x", "nm_short_key"])
def test_missing_malformed_or_unknown_keys_are_unauthorized(keys: SqliteKeyStore, presented: str | None) -> None:
    # Given a key that was never issued
    issue_key(keys, "acme", NOW)
    # When presented, Then it is refused
    with pytest.raises(Unauthorized):
        authenticate(keys, presented)


def test_right_id_wrong_secret_is_unauthorized(keys: SqliteKeyStore) -> None:
    # Given a real key with its secret altered
    key = issue_key(keys, "acme", NOW)
    forged = key[:-1] + ("A" if key[-1] != "A" else "B")
    # When presented, Then it is refused
    with pytest.raises(Unauthorized):
        authenticate(keys, forged)


def test_revoked_key_is_unauthorized(keys: SqliteKeyStore) -> None:
    # Given a revoked key
    key = issue_key(keys, "acme", NOW)
    assert revoke(keys, key, NOW)
    # When presented, Then it is refused
    with pytest.raises(Unauthorized):
        authenticate(keys, key)


def test_workspace_name_is_validated(keys: SqliteKeyStore) -> None:
    with pytest.raises(ValueError, match="workspace"):
        issue_key(keys, "../etc", NOW)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Authorization": "Bearer abc"}, "abc"),
        ({"authorization": "bearer  abc "}, "abc"),
        ({"AUTHORIZATION": "Bearer abc"}, "abc"),
        # The header API Gateway caches the authorizer's decision by is the only one read
        ({"x-api-key": "abc"}, None),
        ({"Authorization": "Basic abc"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_key_comes_from_the_bearer_header_only(headers: dict[str, str] | None, expected: str | None) -> None:
    assert extract_api_key(headers) == expected


def test_the_key_store_factory_chooses_by_settings(tmp_path: Path) -> None:
    from neural_memory.auth.dynamodb import DynamoKeyStore
    from neural_memory.auth.factory import build_key_store
    from neural_memory.errors import ConfigurationError
    from neural_memory.settings import Settings

    assert isinstance(build_key_store(Settings(data_dir=tmp_path)), SqliteKeyStore)
    assert isinstance(build_key_store(Settings(key_store="dynamodb", keys_table="keys")), DynamoKeyStore)
    with pytest.raises(ConfigurationError, match="NM_KEYS_TABLE"):
        build_key_store(Settings(key_store="dynamodb"))
