"""Where the MCP tools' calls go: the embedded store in this process (a ``Service`` built by the
same factory as ``serve``), or a deployed or local API through the typed client.

Both take the API's request bodies (camelCase JSON, as docs/api.md shows them) and return its
reply models, so a tool reads the same from either; both raise ``BackendFailure`` with the error
envelope's code and message."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio.to_thread
from pydantic import ValidationError

from neural_memory.client import ApiError, AsyncNeuralMemoryClient, TransportFailed
from neural_memory.errors import NeuralMemoryError
from neural_memory.models import (
    DEFAULT_LINEAGE,
    AnswerRequest,
    AnswerResponse,
    DeleteResponse,
    ExpertsRequest,
    ExpertsResponse,
    LineageResponse,
    ObservationOut,
    ObservationsRequest,
    ObservationsResponse,
    SearchRequest,
    SearchResponse,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from neural_memory.service import Service


Reply = TypeVar("Reply")
Request = TypeVar("Request", SearchRequest, AnswerRequest, ObservationsRequest, ExpertsRequest)


class BackendFailure(Exception):
    """A call the backend refused or could not serve: the error envelope's code and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class MemoryBackend(Protocol):
    """What the tools need: the API's use cases for one workspace."""

    async def search(self, body: Mapping[str, Any]) -> SearchResponse: ...

    async def answer(self, body: Mapping[str, Any]) -> AnswerResponse: ...

    async def add(self, observations: Sequence[Mapping[str, Any]]) -> ObservationsResponse: ...

    async def get(self, observation_id: str) -> ObservationOut: ...

    async def lineage(self, observation_id: str) -> LineageResponse: ...

    async def experts(self, body: Mapping[str, Any]) -> ExpertsResponse: ...

    async def delete(self, observation_id: str) -> DeleteResponse: ...

    async def close(self) -> None: ...


def validation_message(exc: ValidationError) -> str:
    """The API's 400 message for a request the models refuse: the first field and its problem."""
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"]) or "body"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"


class EmbeddedBackend:
    """One workspace of the embedded store, served in-process; calls run on worker threads (the
    service is synchronous and thread-safe, as under ``serve``)."""

    def __init__(self, service: Service, workspace_id: str) -> None:
        self.service = service
        self.workspace_id = workspace_id

    async def search(self, body: Mapping[str, Any]) -> SearchResponse:
        request = self._valid(SearchRequest, body)
        return await self._run(lambda request_id: self.service.search(self.workspace_id, request, request_id))

    async def answer(self, body: Mapping[str, Any]) -> AnswerResponse:
        request = self._valid(AnswerRequest, body)
        return await self._run(lambda request_id: self.service.answer(self.workspace_id, request, request_id))

    async def add(self, observations: Sequence[Mapping[str, Any]]) -> ObservationsResponse:
        request = self._valid(ObservationsRequest, {"observations": list(observations)})
        return await self._run(
            lambda request_id: self.service.ingest(self.workspace_id, request.observations, request_id)
        )

    async def get(self, observation_id: str) -> ObservationOut:
        return await self._run(lambda request_id: self.service.get(self.workspace_id, observation_id, request_id))

    async def experts(self, body: Mapping[str, Any]) -> ExpertsResponse:
        request = self._valid(ExpertsRequest, body)
        return await self._run(lambda request_id: self.service.experts(self.workspace_id, request, request_id))

    async def lineage(self, observation_id: str) -> LineageResponse:
        return await self._run(
            lambda request_id: self.service.lineage(self.workspace_id, observation_id, DEFAULT_LINEAGE, request_id)
        )

    async def delete(self, observation_id: str) -> DeleteResponse:
        return await self._run(lambda request_id: self.service.delete(self.workspace_id, observation_id, request_id))

    async def close(self) -> None:
        close = getattr(self.service.store, "close", None)
        if close is not None:
            await anyio.to_thread.run_sync(close)  # the embedded store saves its index for the next start

    @staticmethod
    def _valid(model: type[Request], body: Mapping[str, Any]) -> Request:
        try:
            return model.model_validate(dict(body))
        except ValidationError as exc:
            raise BackendFailure("validation_error", validation_message(exc)) from None

    @staticmethod
    async def _run(call: Callable[[str], Reply]) -> Reply:
        request_id = f"mcp-{uuid.uuid4()}"
        try:
            return await anyio.to_thread.run_sync(call, request_id)
        except NeuralMemoryError as exc:
            raise BackendFailure(exc.code, str(exc)) from exc


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
