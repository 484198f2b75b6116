"""The typed client's engineering views (``lineage``, ``experts``) against the real local API over HTTP, sync
and async, on the sample events: the server's own models, its refusals as typed errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import pytest
from neural_memory.local.client import AsyncNeuralMemoryClient, NeuralMemoryClient, NotFound, ValidationFailed
from neural_memory.models import ExpertsResponse, LineageResponse

from tests.helpers.events import EVENTS
from tests.helpers.local_api import RunningApi, running_local_api

if TYPE_CHECKING:
    from collections.abc import Iterator

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration

FAILED_DEPLOY = "vercel-dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx-error"
MERGED_PR = "github-pr-acme.console-482-pull_request_merged"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxLocalEmbedder) -> Iterator[RunningApi]:
    """``make serve`` on a fresh data dir: the demo workspace with the sample events."""
    with running_local_api(tmp_path_factory.mktemp("client-engineering"), embedder, EVENTS) as running:
        yield running


def test_lineage_is_the_servers_model_and_its_refusals_are_typed(api: RunningApi) -> None:
    with NeuralMemoryClient(api.url, api.key) as client:
        reply = client.lineage(FAILED_DEPLOY)
        assert isinstance(reply, LineageResponse) and reply.id == FAILED_DEPLOY
        assert MERGED_PR in [entry.id for entry in reply.timeline]
        assert len(client.lineage(FAILED_DEPLOY, limit=1).timeline) == 2
        with pytest.raises(ValidationFailed) as bad:
            client.lineage(FAILED_DEPLOY, limit=0)
        with pytest.raises(NotFound):
            client.lineage("no-such-observation")
    assert bad.value.details[0].field == "limit"
    with NeuralMemoryClient(api.url, api.key_for("rival")) as rival, pytest.raises(NotFound):
        rival.lineage(FAILED_DEPLOY)


def test_the_async_client_traces_the_same(api: RunningApi) -> None:
    async def traced() -> LineageResponse:
        async with AsyncNeuralMemoryClient(api.url, api.key) as client:
            return await client.lineage(FAILED_DEPLOY)

    with NeuralMemoryClient(api.url, api.key) as client:
        expected = client.lineage(FAILED_DEPLOY)
    assert anyio.run(traced).timeline == expected.timeline


def test_experts_are_the_servers_model_sync_and_async(api: RunningApi) -> None:
    with NeuralMemoryClient(api.url, api.key) as client:
        reply = client.experts("deploy failure", top_k=2, evidence=1, filters={"sourceTypes": ["vercel", "manual"]})
        assert isinstance(reply, ExpertsResponse) and reply.experts[0].actor_name == "octocat"
        assert len(reply.experts) <= 2 and all(len(e.evidence) <= 1 for e in reply.experts)
        with pytest.raises(ValidationFailed) as bad:
            client.experts("deploy failure", top_k=21)
    assert bad.value.details[0].field == "topK"

    async def asked() -> ExpertsResponse:
        async with AsyncNeuralMemoryClient(api.url, api.key) as client:
            return await client.experts(
                "deploy failure", top_k=2, evidence=1, filters={"sourceTypes": ["vercel", "manual"]}
            )

    assert anyio.run(asked).experts == reply.experts
