"""OpenSearch bulk writes retry only retryable item failures, refuse the rest with reasons, and
AWS requests are SigV4-signed. A thin proxy in front of the real client injects item failures
(osmem cannot be told to throttle); the store's code runs unchanged."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.domain.tiers import DEFAULT_POLICY
from neural_memory.errors import ConfigurationError, StoreRejected
from neural_memory.ingest import lifecycle
from neural_memory.ingest.prepare import prepare
from neural_memory.settings import Settings
from neural_memory.stores.base import read_one
from neural_memory.stores.opensearch.client import build_client
from neural_memory.stores.opensearch.errors import RequestTooLarge, domain_error
from neural_memory.stores.opensearch.index import OpenSearchAdmin
from neural_memory.stores.opensearch.store import OpenSearchStore
from opensearchpy import OpenSearch

from tests.helpers.pipeline import NOW, note

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


class FaultyBulk:
    """Delegates to a real client; its first ``bulk`` call answers ``status`` for every other item
    instead of sending it."""

    def __init__(self, client: OpenSearch, status: int) -> None:
        self._client = client
        self._status = status
        self.bulk_calls: list[int] = []
        self.sizes: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def bulk(self, body: str, **kwargs: Any) -> dict[str, Any]:
        lines = [json.loads(line) for line in body.splitlines() if line]
        pairs = list(zip(lines[0::2], lines[1::2], strict=True))
        self.bulk_calls.append(len(pairs))
        self.sizes.append(len(body.encode()))
        if len(self.bulk_calls) > 1:
            return dict(self._client.bulk(body=body, **kwargs))
        sent = [line for i, pair in enumerate(pairs) if i % 2 == 0 for line in pair]
        reply = dict(self._client.bulk(body=sent, **kwargs))
        items = iter(reply["items"])
        merged = []
        for i, (action, _) in enumerate(pairs):
            if i % 2 == 0:
                merged.append(next(items))
            else:
                kind = "es_rejected_execution_exception" if self._status == 429 else "mapper_parsing_exception"
                error = {"type": kind, "reason": f"injected {self._status}"}
                merged.append({"index": {"_id": action["index"]["_id"], "status": self._status, "error": error}})
        return {"errors": True, "items": merged, "took": 1}


def _items(count: int) -> list[Any]:
    return [prepare(note(f"n{i}", f"acme note {i}"), now=NOW, policy=DEFAULT_POLICY, ttl_days=7) for i in range(count)]


def test_throttled_items_alone_are_retried(osmem_url: str) -> None:
    # Given a cluster that throttles half the items of the first bulk request
    client = OpenSearch(hosts=[osmem_url])
    OpenSearchAdmin(client, "nm-w").ensure_index(64, "test-hash-64")
    faulty = FaultyBulk(client, 429)
    store = OpenSearchStore(faulty, "nm-w", refresh="true", single_index=True)
    # When six observations are upserted
    store.write("acme", _items(6))
    # Then the second bulk carried only the three throttled items, and all six are stored
    assert faulty.bulk_calls == [6, 3]
    assert store.count("acme") == 6


def test_items_rejected_for_good_fail_alone_with_their_reasons(osmem_url: str) -> None:
    # Given a cluster that refuses half the items of the first bulk request for good (400)
    client = OpenSearch(hosts=[osmem_url])
    OpenSearchAdmin(client, "nm-w").ensure_index(64, "test-hash-64")
    store = OpenSearchStore(FaultyBulk(client, 400), "nm-w", refresh="true", single_index=True)
    # When four new observations are upserted
    outcome = store.write("acme", _items(4))
    # Then the refused ones are reported with the reason, not stored; the others are stored
    assert outcome.failed == {"n1": "injected 400 (400)", "n3": "injected 400 (400)"}
    assert outcome.created == ["n0", "n2"] and outcome.updated == []
    assert store.count("acme") == 2 and read_one(store, "acme", "n1") is None


def test_bulk_requests_are_split_by_bytes(osmem_url: str) -> None:
    # Given a store whose bulk requests may carry 10 kB of JSON, and notes of about 3 kB each
    client = OpenSearch(hosts=[osmem_url])
    OpenSearchAdmin(client, "nm-w").ensure_index(64, "test-hash-64")
    counting = FaultyBulk(client, 200)
    counting.bulk_calls.append(0)  # pass every call through
    store = OpenSearchStore(counting, "nm-w", refresh="true", bulk_max_bytes=10_000, single_index=True)
    items = [
        prepare(note(f"n{i}", f"acme note {i}", "word " * 600), now=NOW, policy=DEFAULT_POLICY, ttl_days=7)
        for i in range(6)
    ]
    # When they are upserted
    outcome = store.write("acme", items)
    # Then no request carried more than 10 kB, and every observation is stored
    assert len(counting.bulk_calls) > 2 and max(counting.sizes) <= 10_000, counting.sizes
    assert outcome.failed == {} and store.count("acme") == 6


def test_a_refused_identity_or_a_missing_index_is_a_configuration_error() -> None:
    assert isinstance(domain_error(403, {"Message": "User: x is not authorized"}, "nm"), ConfigurationError)
    missing = domain_error(404, {"error": {"type": "index_not_found_exception", "reason": "no such index"}}, "nm")
    assert isinstance(missing, ConfigurationError) and "bootstrap" in str(missing)
    assert isinstance(domain_error(413, {"Message": "Request size exceeded 10485760 bytes"}, "nm"), RequestTooLarge)
    rejected = domain_error(400, {"error": {"type": "mapper_parsing_exception", "reason": "failed to parse"}}, "nm")
    assert type(rejected) is StoreRejected and "failed to parse" in str(rejected) and rejected.status == 422


def test_aws_requests_are_sigv4_signed_for_the_es_service(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings = Settings(
        data_dir=tmp_path,
        opensearch_url="https://search-x.us-east-1.es.amazonaws.com",
        opensearch_aws_region="us-east-1",
    )
    auth = build_client(settings).transport.kwargs["http_auth"]
    assert type(auth).__name__ == "AWSV4SignerAuth"
    assert (auth.signer.region, auth.signer.service) == ("us-east-1", "es")


def test_a_purge_larger_than_one_slice_completes(osmem_url: str) -> None:
    # Given 7 expired observations of 1..2 chunks each, and a store that deletes 3 chunks per request
    client = OpenSearch(hosts=[osmem_url])
    OpenSearchAdmin(client, "nm-w").ensure_index(64, "test-hash-64")
    store = OpenSearchStore(client, "nm-w", refresh="true", purge_slice=3, single_index=True)
    expired = [note(f"old{i}", f"old note {i}", "word " * (300 * (i % 2)), tier="C") for i in range(7)]
    store.write("acme", [prepare(o, now=NOW, policy=DEFAULT_POLICY, ttl_days=7) for o in expired])
    store.write("acme", _items(2))  # not expired
    # When the purge runs 8 days later
    purged = lifecycle.purge_expired(store, NOW + timedelta(days=8))
    # Then every expired observation is gone, in several requests, and the others stay
    assert purged == 7
    assert store.count("acme") == 2
    assert client.count(index="nm-w")["count"] == 2
