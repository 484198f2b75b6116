"""The key store's port: what it keeps (``KeyRecord``, never the key itself) and the few primitives
each backend implements (``KeyStore``): SQLite locally (``auth/sqlite.py``), DynamoDB on AWS
(``auth/dynamodb.py``). The key logic over them is ``auth/keys.py``."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from neural_memory.models import DomainModel


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
