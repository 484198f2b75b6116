"""OpenSearch bulk writes retry only retryable item failures, refuse the rest with reasons, and
AWS requests are SigV4-signed. A thin proxy in front of the real client injects item failures
(osmem cannot be told to throttle); the store's code runs unchanged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.ingest.prepare import prepare
from neural_memory.ingest.tiers import DEFAULT_POLICY
from neural_memory.settings import Settings
from neural_memory.stores.opensearch import OpenSearchAdmin, OpenSearchStore, StoreRejected
from neural_memory.stores.opensearch_client import build_client
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

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def bulk(self, body: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        pairs = list(zip(body[0::2], body[1::2], strict=True))
        self.bulk_calls.append(len(pairs))
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
    store = OpenSearchStore(faulty, "nm-w", refresh="true")
    # When six observations are upserted
    store.upsert("acme", _items(6))
    # Then the second bulk carried only the three throttled items, and all six are stored
    assert faulty.bulk_calls == [6, 3]
    assert store.count("acme") == 6


def test_items_rejected_for_good_fail_with_their_reasons(osmem_url: str) -> None:
    client = OpenSearch(hosts=[osmem_url])
    OpenSearchAdmin(client, "nm-w").ensure_index(64, "test-hash-64")
    store = OpenSearchStore(FaultyBulk(client, 400), "nm-w", refresh="true")
    with pytest.raises(StoreRejected, match="injected 400"):
        store.upsert("acme", _items(4))


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
