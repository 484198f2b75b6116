"""The API's operations, each declared once: its name (the facade's method, the clients'), its route
(method and path) and the function serving it, the role a key needs to call it, its request and
reply models, the MCP tool that runs it and what it does in a line.

Derived from it: the route table's first routes (``api/routes.py``), the handlers' paths and OpenAPI
summaries, the Python clients' requests (``local/client/requests.py``), the hooks' client
(``local/agents/memory_client.py``), the MCP tools' operations and reply models
(``agent_tools/definitions.py``) and the memories the tools run on (``agent_tools/workspace.py``,
``local/mcp_server/backends.py``). The standard library only: the hooks read it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pydantic import BaseModel

Role = Literal["read", "write", "admin"]  # ``auth/roles.py``'s: the least a key needs to call it


@dataclass(frozen=True)
class Operation:
    """One operation of the API. ``request`` and ``reply`` name models of ``neural_memory.models``
    (``request`` None: no body; its input is the path and query); ``tool``: the MCP tool that runs
    it, if one does; ``summary``: what it does, in a line (the OpenAPI summary)."""

    name: str
    method: str
    path: str
    function: str
    role: Role
    request: str | None
    reply: str
    summary: str
    tool: str | None = None

    @property
    def resolver_path(self) -> str:
        """The path as the handlers' resolver (Powertools) spells it: ``/v1/observations/<id>``."""
        return self.path.replace("{", "<").replace("}", ">")

    def target(self, **parameters: str) -> str:
        """The path (relative, no leading slash) with its parameters filled in, each quoted whole."""
        return self.path.lstrip("/").format(**{name: quote(value) for name, value in parameters.items()})


OPERATIONS: tuple[Operation, ...] = (
    Operation("search", "POST", "/v1/search", "search", "read", "SearchRequest", "SearchResponse",
              "Search observations", tool="search_memory"),
    Operation("facets", "GET", "/v1/facets", "search", "read", None, "FacetsResponse",
              "Count observations per filter value"),
    Operation("experts", "POST", "/v1/experts", "search", "read", "ExpertsRequest", "ExpertsResponse",
              "Who knows about a subject", tool="who_knows"),
    Operation("answer", "POST", "/v1/answer", "answer", "read", "AnswerRequest", "AnswerResponse",
              "Answer a question from memory", tool="answer_question"),
    Operation("add", "POST", "/v1/observations", "observations", "write", "ObservationsRequest",
              "ObservationsResponse", "Ingest observations", tool="remember"),
    Operation("get", "GET", "/v1/observations/{id}", "observations", "read", None, "ObservationOut",
              "Read an observation", tool="get_memory"),
    Operation("delete", "DELETE", "/v1/observations/{id}", "observations", "write", None, "DeleteResponse",
              "Delete an observation", tool="forget"),
    Operation("lineage", "GET", "/v1/observations/{id}/lineage", "observations", "read", None, "LineageResponse",
              "Why an observation changed", tool="trace_decision"),
    Operation("promote", "POST", "/v1/observations/{id}/promote", "observations", "write", "PromoteRequest",
              "ObservationOut", "Promote an observation from C to A"),
    Operation("audit", "GET", "/v1/audit", "observations", "admin", None, "AuditResponse", "The audit trail"),
)  # fmt: skip
BY_NAME = {operation.name: operation for operation in OPERATIONS}
BY_TOOL = {operation.tool: operation for operation in OPERATIONS if operation.tool is not None}


_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def quote(value: str) -> str:
    """``value`` as one path segment (``urllib.parse.quote(value, safe="")``, without importing it:
    the hooks start on every prompt)."""
    return "".join(c if c in _SAFE else "".join(f"%{b:02X}" for b in c.encode()) for c in value)


def request_model(operation: Operation) -> type[BaseModel] | None:
    """The operation's request model (None: it takes no body)."""
    return None if operation.request is None else _model(operation.request)


def reply_model(operation: Operation) -> type[BaseModel]:
    """The operation's reply model."""
    return _model(operation.reply)


def _model(name: str) -> type[BaseModel]:
    model: type[BaseModel] = getattr(importlib.import_module("neural_memory.models"), name)
    return model
