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
from neural_memory.models import DEFAULT_LINEAGE
from neural_memory.operations import BY_NAME, request_model

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from pydantic import BaseModel

    from neural_memory.auth.roles import Caller
    from neural_memory.service import Service

Reply = TypeVar("Reply")


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

    def run(self, operation: str, request: Any) -> BaseModel:
        """``operation`` on the workspace: its body validated by the operation's request model (as
        the API would), or the observation id a path names; a fresh request id unless one was given."""
        model = request_model(BY_NAME[operation])
        argument = request if model is None else self._valid(model, request)
        return self._run(lambda request_id: self._call(operation, argument, request_id))

    def _call(self, operation: str, request: Any, request_id: str) -> BaseModel:
        """The facade's method for the operation (the tools run these)."""
        service, workspace = self.service, self.workspace_id
        match operation:
            case "search":
                return service.search(workspace, request, request_id)
            case "answer":
                return service.answer(workspace, request, request_id)
            case "experts":
                return service.experts(workspace, request, request_id)
            case "add":
                return service.ingest(workspace, request.observations, request_id, self.caller)
            case "get":
                return service.get(workspace, request, request_id)
            case "lineage":
                return service.lineage(workspace, request, DEFAULT_LINEAGE, request_id)
            case "delete":
                return service.delete(workspace, request, request_id, self.caller)
        raise BackendFailure("validation_error", f"no tool runs {operation!r}")

    @staticmethod
    def _valid(model: type[BaseModel], body: Mapping[str, Any]) -> BaseModel:
        try:
            return model.model_validate(dict(body))
        except ValidationError as exc:
            raise BackendFailure("validation_error", validation_message(exc)) from None

    def _run(self, call: Callable[[str], Reply]) -> Reply:
        try:
            return call(self.request_id or f"mcp-{uuid.uuid4()}")
        except NeuralMemoryError as exc:
            raise BackendFailure(exc.code, str(exc)) from exc
