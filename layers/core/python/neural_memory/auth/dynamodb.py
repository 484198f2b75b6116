"""API key records in DynamoDB (hashes only), for the Lambda authorizer. boto3 loads on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.auth.base import KeyRecord
from neural_memory.auth.roles import LEGACY_ROLE, check_role
from neural_memory.clock import from_ms, to_ms

if TYPE_CHECKING:
    from datetime import datetime


class DynamoKeyStore:
    """``KeyStore`` over a table keyed by ``key_id`` (a GSI-free design: lookups are by id only)."""

    def __init__(self, table_name: str, client: Any = None) -> None:
        self._table_name = table_name
        self._client = client

    @property
    def _ddb(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client("dynamodb")
        return self._client

    def put_key(self, record: KeyRecord) -> None:
        item = {
            "key_id": {"S": record.key_id},
            "workspace_id": {"S": record.workspace_id},
            "secret_sha256": {"S": record.secret_sha256},
            "created_at": {"N": str(to_ms(record.created_at))},
            "role": {"S": record.role},
        }
        if record.name is not None:
            item["name"] = {"S": record.name}
        self._ddb.put_item(TableName=self._table_name, Item=item, ConditionExpression="attribute_not_exists(key_id)")

    def find_key(self, key_id: str) -> KeyRecord | None:
        item = self._ddb.get_item(TableName=self._table_name, Key={"key_id": {"S": key_id}}, ConsistentRead=True).get(
            "Item"
        )
        return _record(item) if item else None

    def list_keys(self, workspace_id: str | None = None) -> list[KeyRecord]:
        scan: dict[str, Any] = {"TableName": self._table_name}
        if workspace_id is not None:
            scan |= {"FilterExpression": "workspace_id = :w", "ExpressionAttributeValues": {":w": {"S": workspace_id}}}
        records: list[KeyRecord] = []
        for page in self._ddb.get_paginator("scan").paginate(**scan):
            records += [_record(item) for item in page.get("Items", [])]
        return sorted(records, key=lambda r: (r.created_at, r.key_id))

    def touch_key(self, key_id: str, when: datetime) -> None:
        self._ddb.update_item(
            TableName=self._table_name,
            Key={"key_id": {"S": key_id}},
            UpdateExpression="SET last_used_at = :t",
            ConditionExpression="attribute_exists(key_id)",
            ExpressionAttributeValues={":t": {"N": str(to_ms(when))}},
        )

    def revoke_key(self, key_id: str, when: datetime) -> bool:
        try:
            self._ddb.update_item(
                TableName=self._table_name,
                Key={"key_id": {"S": key_id}},
                UpdateExpression="SET revoked_at = :t",
                ConditionExpression="attribute_exists(key_id) AND attribute_not_exists(revoked_at)",
                ExpressionAttributeValues={":t": {"N": str(to_ms(when))}},
            )
        except self._ddb.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def has_keys(self, workspace_id: str) -> bool:
        reply = self._ddb.scan(
            TableName=self._table_name,
            FilterExpression="workspace_id = :w",
            ExpressionAttributeValues={":w": {"S": workspace_id}},
            ProjectionExpression="key_id",
        )
        return bool(reply.get("Items"))


def _record(item: dict[str, Any]) -> KeyRecord:
    """A key's item as its record: one made before names and roles has neither (a write key named
    after its workspace)."""
    revoked = item.get("revoked_at", {}).get("N")
    used = item.get("last_used_at", {}).get("N")
    role = item.get("role", {}).get("S")
    return KeyRecord(
        key_id=item["key_id"]["S"],
        workspace_id=item["workspace_id"]["S"],
        secret_sha256=item["secret_sha256"]["S"],
        created_at=from_ms(int(item["created_at"]["N"])),
        revoked_at=None if revoked is None else from_ms(int(revoked)),
        name=item.get("name", {}).get("S"),
        role=check_role(role) if role else LEGACY_ROLE,
        last_used_at=None if used is None else from_ms(int(used)),
    )
