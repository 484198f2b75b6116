"""The observation's stored fields are declared once (``ObservationRecord``); everything else is
derived from or checked against that declaration."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from neural_memory.domain.tiers import DEFAULT_POLICY
from neural_memory.ingest.prepare import prepare
from neural_memory.models import ObservationIn, ObservationOut, ObservationRecord
from neural_memory.stores.opensearch.mapping import index_body
from neural_memory.stores.record_fields import FIELD_NAMES, RECORD_FIELDS, _kind
from neural_memory.stores.sqlite.db import SCHEMA

NOW = datetime(2025, 12, 14, 12, 0, tzinfo=UTC)


def test_every_record_field_is_a_sqlite_column_and_an_opensearch_property() -> None:
    properties = index_body(8, "m")["mappings"]["properties"]
    for field in RECORD_FIELDS:
        assert f"\n    {field.name} " in SCHEMA, field.name
        assert ("observation_id" if field.name == "id" else field.name) in properties, field.name


def test_a_field_no_store_can_keep_fails_naming_it() -> None:
    with pytest.raises(TypeError, match=r"ObservationRecord\.tags: no store knows"):
        _kind("tags", set[str], [])


def test_the_api_returns_every_stored_field() -> None:
    # GET /v1/observations/{id} shows the whole record (the content hash and the recurrence key,
    # hashes the service compares, and stale_at, the staleness bookkeeping's time of the push the
    # shown possiblyStale names, are internal)
    internal = {"content_hash", "recurrence_key", "stale_at"}
    assert set(ObservationOut.model_fields) == (set(FIELD_NAMES) - internal) | {"request_id"}


def test_prepare_copies_every_field_a_client_sends() -> None:
    sent = ObservationIn.model_validate(
        {
            "id": "n1",
            "source": "manual",
            "sourceType": "memo",
            "observationType": "note",
            "actorName": "alice",
            "occurredAt": NOW,
            "title": "t",
            "content": "c",
            "url": "https://x.test/1",
            "sessionId": "s1",
            "parentId": "p1",
            "tier": "C",
            "metadata": {"k": 1},
        }
    )
    record = prepare(sent, now=NOW, policy=DEFAULT_POLICY, ttl_days=7)
    shared = set(ObservationIn.model_fields) & set(ObservationRecord.model_fields)
    assert {name: getattr(record.record, name) for name in shared} == {name: getattr(sent, name) for name in shared}
