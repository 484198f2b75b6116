"""Issue 48, item 6: every 400 names the field as the caller sent it. Every query parameter of every
route (read from the OpenAPI document, so a new one is covered the day it is added) given a value it
refuses, through the local gateway and the functions' handlers; and every argument of every MCP tool
(read from the tools' input schemas) missing or of the wrong type."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from mcp import Client
from neural_memory.auth.keys import issue_key
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.local.mcp_server.backends import EmbeddedBackend
from neural_memory.local.mcp_server.tools import build_server
from neural_memory.local.serving.gateway import LocalGateway, openapi_document
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.events import NOW
from tests.helpers.fakes import HashEmbedder
from tests.helpers.mcp_sessions import text_of

if TYPE_CHECKING:
    from collections.abc import Iterator

    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration
LONG = "a" * 3000  # over every text limit of a query parameter (q: 2000 characters)


def _refused_values(schema: dict[str, Any]) -> list[str]:
    """Values of a query parameter its schema refuses (as they appear in a query string)."""
    options = [s for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
    kind = options[0]
    if kind.get("type") == "array":
        return [value for value in _refused_values(kind["items"]) if value]
    if "enum" in kind:
        return ["nope"]
    if kind.get("type") == "integer":
        return ["abc", str(int(kind.get("maximum", 10**6)) + 1)]
    if kind.get("type") == "boolean":
        return ["maybe"]
    if kind.get("format") == "date-time":
        return ["yesterday", "2025-12-12T10:00:00"]
    if "pattern" in kind:
        return ["!bad", "x" * (int(kind.get("maxLength", 200)) + 1)]
    return [LONG, "%20"]


def _query_cases() -> list[tuple[str, str, str]]:
    cases = []
    for path, operations in openapi_document()["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] != "query":
                    continue
                for value in _refused_values(parameter["schema"]):
                    cases.append((f"{method.upper()} {path}", parameter["name"], value))
    return cases


CASES = _query_cases()


@pytest.fixture
def gateway(settings: Settings) -> Iterator[tuple[LocalGateway, str]]:
    """The local gateway over a store with the hashing embedder, and an admin key of workspace acme
    (every route's parameters are checked before its role, but the audit trail is an admin's)."""
    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    set_service(service)
    keys = SqliteKeyStore(settings.sqlite_path)
    try:
        yield LocalGateway(keys, concurrency=1), issue_key(keys, "acme", NOW, role="admin")
    finally:
        set_service(None)
        keys.close()


def test_every_route_with_query_parameters_is_audited() -> None:
    # The OpenAPI document lists the query parameters of experts, facets, lineage and the audit
    # trail: all of them here
    audited = {(route, name) for route, name, _ in CASES}
    assert {route for route, _ in audited} == {
        "GET /v1/audit",
        "GET /v1/experts",
        "GET /v1/facets",
        "GET /v1/observations/{id}/lineage",
    }
    assert len(audited) == 31, sorted(audited)


@pytest.mark.parametrize(("route", "name", "value"), CASES, ids=[f"{r} {n}={v[:12]}" for r, n, v in CASES])
def test_a_refused_query_parameter_is_a_400_naming_it(
    gateway: tuple[LocalGateway, str], route: str, name: str, value: str
) -> None:
    # Given a route and one of its query parameters with a value it refuses (q given where needed)
    served, key = gateway
    method, path = route.split(" ")
    query = f"{name}={value}" + ("&q=deploy" if name != "q" and path == "/v1/experts" else "")
    target = path.replace("{id}", "note-1") + "?" + query
    # When it is sent
    reply = served.dispatch(method, target, {"Authorization": f"Bearer {key}"}, b"")
    error = json.loads(reply.body)["error"]
    # Then it is a 400 whose message and first detail name the parameter as sent (or its item)
    assert reply.status == 400, reply.body
    field = error["details"][0]["field"]
    assert field == name or field.startswith(f"{name}."), error
    assert error["message"].startswith(f"{field}: ") and "None" not in error["message"], error


def _wrong_type(schema: dict[str, Any]) -> Any:
    """An argument value of a type the tool's input schema does not take."""
    options = schema.get("anyOf", [schema])
    takes_objects = any(o.get("type") == "object" or "$ref" in o for o in options)
    return 42 if takes_objects else {"not": "this"}


def test_every_mcp_tool_argument_missing_or_mistyped_is_named(settings: Settings) -> None:
    # Given the MCP server over the embedded store, as `neural-memory mcp` builds it
    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    server = build_server(EmbeddedBackend(service, "acme"))
    minimal: dict[str, dict[str, Any]] = {"search_memory": {"query": "deploy"}, "answer_question": {"question": "?"}}
    minimal |= {"who_knows": {"query": "deploy"}, "get_memory": {"id": "n-1"}, "forget": {"id": "n-1"}}
    minimal |= {"trace_decision": {"id": "n-1"}, "remember": {"observations": [{"content": "a note"}]}}

    async def session() -> dict[str, str]:
        texts: dict[str, str] = {}
        async with Client(server) as agent:
            for tool in (await agent.list_tools()).tools:
                schema = tool.input_schema
                for name in schema.get("required", []):
                    arguments = {k: v for k, v in minimal[tool.name].items() if k != name}
                    result = await agent.call_tool(tool.name, arguments)
                    texts[f"{tool.name} without {name}"] = text_of(result) if result.is_error else "accepted"
                for name, prop in schema["properties"].items():
                    arguments = {**minimal[tool.name], name: _wrong_type(prop)}
                    result = await agent.call_tool(tool.name, arguments)
                    texts[f"{tool.name} {name}"] = text_of(result) if result.is_error else "accepted"
        return texts

    # When each required argument is left out, and each argument is given a value of the wrong type
    texts = anyio.run(session)
    # Then each refusal names that argument, as the agent wrote it
    assert len(texts) >= 20, texts
    wrong = {
        case: text
        for case, text in texts.items()
        if not text.startswith(f"validation_error: {case.rsplit(' ', 1)[-1]}")
    }
    assert wrong == {}, wrong
