"""The API key store named by the settings, imported only when chosen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from neural_memory.auth.base import KeyStore
    from neural_memory.settings import Settings


def build_key_store(settings: Settings) -> KeyStore:
    """The API key store named by ``settings.key_store``: the authorizer, the CLI and the local
    gateway all get theirs here. Constructing it does no I/O."""
    if settings.key_store == "dynamodb":
        if not settings.keys_table:
            raise ConfigurationError("NM_KEYS_TABLE is not set but NM_KEY_STORE=dynamodb")
        from neural_memory.auth.dynamodb import DynamoKeyStore  # boto3 loads on first use

        return DynamoKeyStore(settings.keys_table)
    from neural_memory.auth.sqlite import SqliteKeyStore

    return SqliteKeyStore(settings.sqlite_path, settings.sqlite_synchronous)
