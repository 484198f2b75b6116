"""Where the MCP tools' calls go: the embedded store in this process (a ``Service`` built by the
same factory as ``serve``), or a deployed or local API through the typed client.

Both take the API's request bodies (camelCase JSON, as docs/api.md shows them) and return its
reply models, so a tool reads the same from either; both raise ``BackendFailure`` with the error
envelope's code and message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio.to_thread

from neural_memory.agent_tools.calling import AsyncMemory
from neural_memory.agent_tools.workspace import BackendFailure, WorkspaceMemory
from neural_memory.auth.roles import Caller
from neural_memory.local.client import ApiError, AsyncNeuralMemoryClient, TransportFailed

if TYPE_CHECKING:
    from collections.abc import Awaitable, Mapping, Sequence

    from neural_memory.models import (
        AnswerResponse,
        DeleteResponse,
        ExpertsResponse,
        LineageResponse,
        ObservationOut,
        ObservationsResponse,
        SearchResponse,
    )
    from neural_memory.service import Service

__all__ = ["BackendFailure", "EmbeddedBackend", "MemoryBackend", "RemoteBackend"]

Reply = TypeVar("Reply")


class MemoryBackend(AsyncMemory, Protocol):
    """What the tools need (the API's use cases for one workspace), and closing it."""

    async def close(self) -> None: ...


class EmbeddedBackend:
    """One workspace of the embedded store, served in-process (``agent_tools.workspace``); calls run
    on worker threads (the service is synchronous and thread-safe, as under ``serve``)."""

    def __init__(self, service: Service, workspace_id: str) -> None:
        self.service = service
        self.workspace_id = workspace_id
        # No key on the embedded store: it writes as the workspace's own name, as a key made before
        # names would, with the operator's rights (whoever runs it can open the files anyway).
        self._memory = WorkspaceMemory(service, workspace_id, caller=Caller(name=workspace_id, role="admin"))

    async def search(self, body: Mapping[str, Any]) -> SearchResponse:
        return await anyio.to_thread.run_sync(self._memory.search, body)

    async def answer(self, body: Mapping[str, Any]) -> AnswerResponse:
        return await anyio.to_thread.run_sync(self._memory.answer, body)

    async def add(self, observations: Sequence[Mapping[str, Any]]) -> ObservationsResponse:
        return await anyio.to_thread.run_sync(self._memory.add, observations)

    async def get(self, observation_id: str) -> ObservationOut:
        return await anyio.to_thread.run_sync(self._memory.get, observation_id)

    async def experts(self, body: Mapping[str, Any]) -> ExpertsResponse:
        return await anyio.to_thread.run_sync(self._memory.experts, body)

    async def lineage(self, observation_id: str) -> LineageResponse:
        return await anyio.to_thread.run_sync(self._memory.lineage, observation_id)

    async def delete(self, observation_id: str) -> DeleteResponse:
        return await anyio.to_thread.run_sync(self._memory.delete, observation_id)

    async def close(self) -> None:
        close = getattr(self.service.store, "close", None)
        if close is not None:
            await anyio.to_thread.run_sync(close)  # the embedded store saves its index for the next start


class RemoteBackend:
    """An API (a deployed stack's ``ApiUrl`` or ``make serve``) through the async client; the
    key names the workspace."""

    def __init__(self, client: AsyncNeuralMemoryClient) -> None:
        self.client = client

    async def search(self, body: Mapping[str, Any]) -> SearchResponse:
        query, rest = _split(body, "query")
        return await self._run(self.client.search(query, options=rest))

    async def answer(self, body: Mapping[str, Any]) -> AnswerResponse:
        question, rest = _split(body, "question")
        return await self._run(self.client.answer(question, options=rest))

    async def add(self, observations: Sequence[Mapping[str, Any]]) -> ObservationsResponse:
        return await self._run(self.client.add(observations))

    async def get(self, observation_id: str) -> ObservationOut:
        return await self._run(self.client.get(observation_id))

    async def experts(self, body: Mapping[str, Any]) -> ExpertsResponse:
        query, rest = _split(body, "query")
        return await self._run(
            self.client.experts(
                query,
                top_k=rest.get("topK"),
                filters=rest.get("filters"),
                mode=rest.get("mode"),
                evidence=rest.get("evidence"),
            )
        )

    async def lineage(self, observation_id: str) -> LineageResponse:
        return await self._run(self.client.lineage(observation_id))

    async def delete(self, observation_id: str) -> DeleteResponse:
        return await self._run(self.client.delete(observation_id))

    async def close(self) -> None:
        await self.client.aclose()

    @staticmethod
    async def _run(call: Awaitable[Reply]) -> Reply:
        try:
            return await call
        except ApiError as exc:
            raise BackendFailure(exc.code, exc.message) from exc
        except TransportFailed as exc:
            raise BackendFailure("unreachable", str(exc)) from exc


def _split(body: Mapping[str, Any], text_field: str) -> tuple[str, dict[str, Any]]:
    rest = dict(body)
    return str(rest.pop(text_field)), rest
