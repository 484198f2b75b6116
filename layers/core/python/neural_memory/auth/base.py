"""The key store's port: what it keeps (``KeyRecord``, never the key itself) and the few primitives
each backend implements (``KeyStore``): SQLite locally (``auth/sqlite.py``), DynamoDB on AWS
(``auth/dynamodb.py``). The key logic over them is ``auth/keys.py``."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from neural_memory.auth.roles import LEGACY_ROLE, Caller, Role
from neural_memory.models import DomainModel


class KeyRecord(DomainModel):
    """What the key store keeps: never the key itself."""

    key_id: str
    workspace_id: str
    secret_sha256: str
    created_at: datetime
    revoked_at: datetime | None = None
    # Who acts with the key, and what it may do (``auth/roles.py``). A key made before these
    # existed has neither stored: it is a ``write`` key named after its workspace.
    name: str | None = None
    role: Role = LEGACY_ROLE
    last_used_at: datetime | None = None

    @property
    def caller(self) -> Caller:
        """Who calls with this key: its name (the workspace's, for a key made before names) and role."""
        return Caller(name=self.name or self.workspace_id, role=self.role)


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

    def list_keys(self, workspace_id: str | None = None) -> list[KeyRecord]:
        """Every key record (of one workspace, or of all), revoked ones included, oldest first."""
        ...

    def touch_key(self, key_id: str, when: datetime) -> None:
        """Record that the key was used at ``when`` (``keys.identify`` calls it at most once per
        ``keys.LAST_USED_EVERY`` and key, so a request does not pay a write)."""
        ...
