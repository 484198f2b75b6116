"""API keys: one workspace per key, stored hashed, checked in constant time.

A key reads ``nm_<key id>_<secret>``. The key id (public, 12 hex chars) finds the record; the
secret (256 random bits) is compared as a sha256 digest with ``hmac.compare_digest``. A slow
password hash is unnecessary: the secret is random and long, not chosen by a person.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from neural_memory.errors import Unauthorized
from neural_memory.models import DomainModel

if TYPE_CHECKING:
    from collections.abc import Mapping

_KEY = re.compile(r"^nm_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
API_KEY_HEADER = "Authorization"
WORKSPACE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class KeyRecord(DomainModel):
    """What the key store keeps: never the key itself."""

    key_id: str
    workspace_id: str
    secret_sha256: str
    created_at: datetime
    revoked_at: datetime | None = None


class KeyStore(Protocol):
    """Persistence of key records (SQLite locally, DynamoDB on AWS)."""

    def put_key(self, record: KeyRecord) -> None:
        """Store a new key record."""
        ...

    def find_key(self, key_id: str) -> KeyRecord | None:
        """The record of ``key_id``, revoked or not."""
        ...

    def revoke_key(self, key_id: str, when: datetime) -> bool:
        """Mark the key revoked; False if unknown."""
        ...

    def has_keys(self, workspace_id: str) -> bool:
        """Whether any key (revoked or not) was ever issued for the workspace."""
        ...


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def issue_key(store: KeyStore, workspace_id: str, now: datetime) -> str:
    """Create a key for ``workspace_id`` and return it; only its digest is stored."""
    if not WORKSPACE_PATTERN.match(workspace_id):
        raise ValueError("workspace must be 1..64 letters, digits, '.', '_' or '-', starting with a letter or digit")
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    store.put_key(KeyRecord(key_id=key_id, workspace_id=workspace_id, secret_sha256=_digest(secret), created_at=now))
    return f"nm_{key_id}_{secret}"


def authenticate(store: KeyStore, presented: str | None) -> str:
    """The workspace of a valid, unrevoked key; ``Unauthorized`` otherwise (same message for every case)."""
    match = _KEY.match(presented or "")
    record = store.find_key(match.group(1)) if match else None
    # Compare even when the id is unknown, so timing does not tell ids apart.
    expected = record.secret_sha256 if record else _digest("")
    supplied = _digest(match.group(2)) if match else _digest("x")
    if not hmac.compare_digest(expected, supplied) or record is None or record.revoked_at is not None:
        raise Unauthorized("missing or invalid API key")
    return record.workspace_id


def revoke(store: KeyStore, presented: str, now: datetime) -> bool:
    """Revoke a key (identified by the key itself); False if it is unknown."""
    match = _KEY.match(presented)
    return match is not None and store.revoke_key(match.group(1), now)


def extract_api_key(headers: Mapping[str, str] | None) -> str | None:
    """The key from ``Authorization: Bearer <key>`` (header name case-insensitive). The only way to
    present a key: on AWS this header is the authorizer's cache key (its identity source), so a
    second way would be refused there while working locally."""
    if not headers:
        return None
    lowered = {name.lower(): value for name, value in headers.items() if isinstance(value, str)}
    scheme, _, token = lowered.get(API_KEY_HEADER.lower(), "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


_key_store: KeyStore | None = None


def get_key_store() -> KeyStore:
    """The process-wide key store (``build_key_store(get_settings())`` on first call)."""
    global _key_store  # noqa: PLW0603 - one store (and client) per process, like the service
    if _key_store is None:
        from neural_memory.settings import get_settings
        from neural_memory.stores import build_key_store

        _key_store = build_key_store(get_settings())
    return _key_store


def set_key_store(store: KeyStore | None) -> None:
    """Install the key store the authorizer uses (the local gateway and tests bring their own)."""
    global _key_store  # noqa: PLW0603
    _key_store = store
