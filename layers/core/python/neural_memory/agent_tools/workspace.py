"""The memory of one workspace served in this process: the service's use cases as the tools call
them, with the API's request bodies (camelCase JSON, as docs/api.md shows them) and its reply
models, synchronously. The Lambda function's ``/mcp`` calls it directly; ``neural-memory mcp`` on
the embedded store calls it on worker threads (``local/mcp_server/backends.py``).

A call the service refuses, or a body the API's models refuse, is ``BackendFailure``: the error
envelope's code and message, as a remote API would give them."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from neural_memory.auth.roles import OPERATOR
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
    from collections.abc import Callable, Mapping, Sequence

    from neural_memory.auth.roles import Caller
    from neural_memory.service import Service

Reply = TypeVar("Reply")
Request = TypeVar("Request", SearchRequest, AnswerRequest, ObservationsRequest, ExpertsRequest)


class BackendFailure(Exception):
    """A call the backend refused or could not serve: the error envelope's code and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def validation_message(exc: ValidationError) -> str:
    """The API's 400 message for a request the models refuse: the first field and its problem."""
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"]) or "body"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"


class WorkspaceMemory:
    """One workspace of ``service``, as ``caller`` (the key's name and role on ``/mcp``; the operator
    on the embedded store). Each call's request id is ``request_id`` when given (API Gateway's, on
    Lambda), else a fresh ``mcp-<uuid>``."""

    def __init__(
        self, service: Service, workspace_id: str, request_id: str | None = None, caller: Caller = OPERATOR
    ) -> None:
        self.service = service
        self.workspace_id = workspace_id
        self.request_id = request_id
        self.caller = caller

    def search(self, body: Mapping[str, Any]) -> SearchResponse:
        request = self._valid(SearchRequest, body)
        return self._run(lambda request_id: self.service.search(self.workspace_id, request, request_id))

    def answer(self, body: Mapping[str, Any]) -> AnswerResponse:
        request = self._valid(AnswerRequest, body)
        return self._run(lambda request_id: self.service.answer(self.workspace_id, request, request_id))

    def add(self, observations: Sequence[Mapping[str, Any]]) -> ObservationsResponse:
        request = self._valid(ObservationsRequest, {"observations": list(observations)})
        return self._run(
            lambda request_id: self.service.ingest(self.workspace_id, request.observations, request_id, self.caller)
        )

    def get(self, observation_id: str) -> ObservationOut:
        return self._run(lambda request_id: self.service.get(self.workspace_id, observation_id, request_id))

    def experts(self, body: Mapping[str, Any]) -> ExpertsResponse:
        request = self._valid(ExpertsRequest, body)
        return self._run(lambda request_id: self.service.experts(self.workspace_id, request, request_id))

    def lineage(self, observation_id: str) -> LineageResponse:
        return self._run(
            lambda request_id: self.service.lineage(self.workspace_id, observation_id, DEFAULT_LINEAGE, request_id)
        )

    def delete(self, observation_id: str) -> DeleteResponse:
        return self._run(
            lambda request_id: self.service.delete(self.workspace_id, observation_id, request_id, self.caller)
        )

    @staticmethod
    def _valid(model: type[Request], body: Mapping[str, Any]) -> Request:
        try:
            return model.model_validate(dict(body))
        except ValidationError as exc:
            raise BackendFailure("validation_error", validation_message(exc)) from None

    def _run(self, call: Callable[[str], Reply]) -> Reply:
        try:
            return call(self.request_id or f"mcp-{uuid.uuid4()}")
        except NeuralMemoryError as exc:
            raise BackendFailure(exc.code, str(exc)) from exc
