"""Where the MCP tools' calls go: the embedded store in this process (a ``Service`` built by the
same factory as ``serve``), or a deployed or local API through the typed client.

Both run an API operation (``operations.OPERATIONS``) with its request body (camelCase JSON, as
docs/api.md shows them) or the id its path names, and return its reply model, so a tool reads the
same from either; both raise ``BackendFailure`` with the error envelope's code and message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio.to_thread

from neural_memory.agent_tools.calling import AsyncMemory
from neural_memory.agent_tools.workspace import BackendFailure, WorkspaceMemory
from neural_memory.auth.roles import Caller
from neural_memory.local.client import ApiError, AsyncNeuralMemoryClient, TransportFailed
from neural_memory.local.client.requests import operation_call
from neural_memory.operations import BY_NAME, reply_model

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from pydantic import BaseModel

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

    async def run(self, operation: str, request: Any) -> BaseModel:
        return await anyio.to_thread.run_sync(self._memory.run, operation, request)

    async def close(self) -> None:
        close = getattr(self.service.store, "close", None)
        if close is not None:
            await anyio.to_thread.run_sync(close)  # the embedded store saves its index for the next start


class RemoteBackend:
    """An API (a deployed stack's ``ApiUrl`` or ``make serve``) through the async client; the
    key names the workspace."""

    def __init__(self, client: AsyncNeuralMemoryClient) -> None:
        self.client = client

    async def run(self, operation: str, request: Any) -> BaseModel:
        """The operation's request over HTTP (``operations.OPERATIONS``: its route and reply model)."""
        chosen = BY_NAME[operation]
        return await self._run(self.client.send(operation_call(chosen, request), reply_model(chosen)))

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
