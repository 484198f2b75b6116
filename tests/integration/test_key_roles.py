"""Named keys with roles, through the real local server (waitress, the gateway, the authorizer, the
handlers, SQLite, the local model): a ``read`` key is refused every write (REST 403, MCP tool
error, each naming the role needed), a ``write`` key's observations carry its name as
``createdBy`` whatever the body claims, one ``write`` key cannot change or delete another's, an
``admin`` can, and the audit trail lists each (key name, action, ids; never content) to admins only."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from neural_memory.operations import OPERATIONS

from tests.helpers.local_api import RunningApi, running_local_api
from tests.helpers.mcp_sessions import text_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration

WS = "team"
SECRET_WORDS = "the staging database password rotates every Friday"


def _note(observation_id: str, content: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": observation_id,
        "source": "manual",
        "observationType": "decision",
        "actorName": "ana",
        "occurredAt": "2025-12-10T09:00:00Z",
        "title": f"Decision {observation_id}",
        "content": content,
        **extra,
    }


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxLocalEmbedder) -> Iterator[RunningApi]:
    with running_local_api(tmp_path_factory.mktemp("roles"), embedder, None) as running:
        yield running


@pytest.fixture(scope="module")
def keys(api: RunningApi) -> dict[str, str]:
    """One key a role, and a second writer."""
    return {
        "reader": api.key_for(WS, "rita", "read"),
        "alice": api.key_for(WS, "alice", "write"),
        "bob": api.key_for(WS, "bob", "write"),
        "admin": api.key_for(WS, "ops", "admin"),
    }


def _call(api: RunningApi, key: str, method: str, path: str, body: Any = None) -> httpx.Response:
    content = None if body is None else json.dumps(body)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    return httpx.request(method, f"{api.url}{path}", content=content, headers=headers, timeout=60)


def _refused(reply: httpx.Response, role: str) -> None:
    assert reply.status_code == 403, reply.text
    error = reply.json()["error"]
    assert error["code"] == "forbidden"
    assert f"needs a key with the {role} role" in error["message"]


@asynccontextmanager
async def _mcp(api: RunningApi, key: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http,
        Client(streamable_http_client(f"{api.url}/mcp", http_client=http)) as agent,
    ):
        yield agent


def test_a_read_key_reads_but_is_refused_every_write_on_rest_and_mcp(api: RunningApi, keys: dict[str, str]) -> None:
    # Given an observation alice wrote, and a read key of the same workspace
    assert _call(
        api, keys["alice"], "POST", "/v1/observations", {"observations": [_note("r-1", "We use Postgres 16.")]}
    ).is_success
    reader = keys["reader"]
    # When the read key searches, reads, asks, and tries every write
    reads = [
        _call(api, reader, "POST", "/v1/search", {"query": "Postgres"}),
        _call(api, reader, "GET", "/v1/observations/r-1"),
        _call(api, reader, "GET", "/v1/observations/r-1/lineage"),
        _call(api, reader, "GET", "/v1/facets"),
        _call(api, reader, "POST", "/v1/answer", {"question": "Which Postgres?"}),
        _call(api, reader, "GET", "/v1/experts?q=Postgres"),
    ]
    writes = [
        _call(api, reader, "POST", "/v1/observations", {"observations": [_note("r-2", "Sneaky write.")]}),
        _call(api, reader, "DELETE", "/v1/observations/r-1"),
        _call(api, reader, "POST", "/v1/observations/r-1/promote", {"reason": "keep"}),
    ]

    async def tools() -> dict[str, tuple[bool, str]]:
        async with _mcp(api, reader) as agent:
            calls = {
                "remember": await agent.call_tool("remember", {"observations": [{"content": "Sneaky note."}]}),
                "forget": await agent.call_tool("forget", {"id": "r-1"}),
                "search_memory": await agent.call_tool("search_memory", {"query": "Postgres"}),
            }
        return {name: (bool(result.is_error), text_of(result)) for name, result in calls.items()}

    mcp = anyio.run(tools)
    # Then every read answers, every write is a 403 naming the write role, and nothing changed
    assert [r.status_code for r in reads] == [200] * len(reads), [r.text for r in reads]
    for reply in writes:
        _refused(reply, "write")
    for tool in ("remember", "forget"):
        refused, text = mcp[tool]
        assert refused and text.startswith("forbidden: ") and "needs a key with the write role" in text, text
    assert not mcp["search_memory"][0] and "[r-1]" in mcp["search_memory"][1]
    assert _call(api, reader, "GET", "/v1/observations/r-2").status_code == 404
    assert _call(api, reader, "GET", "/v1/observations/r-1").json()["title"] == "Decision r-1"
    # And the read key cannot read the audit trail
    _refused(_call(api, reader, "GET", "/v1/audit"), "admin")


# A valid request of each operation (``operations.OPERATIONS``), so what refuses it is the role.
_PROBES: dict[str, Any] = {
    "search": {"query": "staging database"},
    "experts": {"query": "staging database"},
    "answer": {"question": "when does the staging password rotate?"},
    "add": {"observations": [_note("role-probe", "A decision written to probe the roles.")]},
    "promote": {"reason": "kept"},
}
_BELOW = {"write": "reader", "admin": "alice"}  # a key one role below


def test_every_operation_needs_the_role_its_declaration_names(api: RunningApi, keys: dict[str, str]) -> None:
    # Given one key of each role, and each operation's declared role (the one table of operations)
    for operation in OPERATIONS:
        target = "/" + operation.target(id="role-probe")
        body = _PROBES.get(operation.name)
        if operation.role == "read":
            # When the least key calls an operation any key may call, Then no role refuses it
            reply = _call(api, keys["reader"], operation.method, target, body)
            assert reply.status_code != 403, (operation.name, reply.text)
            continue
        # When a key one role below the declared one calls it, Then it is refused, naming the role
        below = _BELOW[operation.role]
        _refused(_call(api, keys[below], operation.method, target, body), operation.role)


def test_created_by_is_the_key_s_name_whatever_the_body_claims(api: RunningApi, keys: dict[str, str]) -> None:
    # Given alice's key writing an observation whose body claims bob wrote it
    note = _note("c-1", "Feature flags live in LaunchDarkly.", createdBy="bob")
    assert _call(api, keys["alice"], "POST", "/v1/observations", {"observations": [note]}).is_success
    # When it is read, searched (with and without the createdBy filter) and read through MCP
    read = _call(api, keys["reader"], "GET", "/v1/observations/c-1").json()
    found = _call(api, keys["reader"], "POST", "/v1/search", {"query": "LaunchDarkly feature flags", "mode": "keyword"})
    by_alice = _call(
        api, keys["reader"], "POST", "/v1/search", {"query": "LaunchDarkly", "filters": {"createdBy": ["alice"]}}
    )
    by_bob = _call(
        api, keys["reader"], "POST", "/v1/search", {"query": "LaunchDarkly", "filters": {"createdBy": ["bob"]}}
    )

    async def mcp_text() -> str:
        async with _mcp(api, keys["reader"]) as agent:
            return (
                text_of(await agent.call_tool("get_memory", {"id": "c-1"}))
                + "\n"
                + text_of(await agent.call_tool("search_memory", {"query": "LaunchDarkly", "mode": "keyword"}))
            )

    text = anyio.run(mcp_text)
    # Then the server's word stands: alice wrote it, and only the alice filter finds it
    assert read["createdBy"] == "alice" and read["actorName"] == "ana"
    assert [(r["id"], r["createdBy"]) for r in found.json()["results"]] == [("c-1", "alice")]
    assert [r["id"] for r in by_alice.json()["results"]] == ["c-1"]
    assert by_bob.json()["results"] == []
    assert "saved by alice" in text and "saved by bob" not in text


def test_a_writer_cannot_change_or_delete_another_s_and_an_admin_can(api: RunningApi, keys: dict[str, str]) -> None:
    # Given an observation alice wrote
    assert _call(
        api, keys["alice"], "POST", "/v1/observations", {"observations": [_note("o-1", "Retries: 3.")]}
    ).is_success
    # When bob overwrites and deletes it, Then each is a 403 naming the admin role
    _refused(
        _call(api, keys["bob"], "POST", "/v1/observations", {"observations": [_note("o-1", "Retries: 9.")]}), "admin"
    )
    _refused(_call(api, keys["bob"], "DELETE", "/v1/observations/o-1"), "admin")
    assert _call(api, keys["bob"], "GET", "/v1/observations/o-1").json()["content"] == "Retries: 3."

    async def bob_forgets() -> tuple[bool, str]:
        async with _mcp(api, keys["bob"]) as agent:
            result = await agent.call_tool("forget", {"id": "o-1"})
        return bool(result.is_error), text_of(result)

    refused, text = anyio.run(bob_forgets)
    assert refused and text.startswith("forbidden: ") and "needs a key with the admin role" in text
    # And alice may change her own, and an admin may change and delete it (alice still wrote it)
    assert _call(
        api, keys["alice"], "POST", "/v1/observations", {"observations": [_note("o-1", "Retries: 4.")]}
    ).is_success
    assert _call(
        api, keys["admin"], "POST", "/v1/observations", {"observations": [_note("o-1", "Retries: 5.")]}
    ).is_success
    assert _call(api, keys["admin"], "GET", "/v1/observations/o-1").json()["createdBy"] == "alice"
    assert _call(api, keys["admin"], "DELETE", "/v1/observations/o-1").json()["deleted"] is True


def test_the_audit_trail_lists_who_did_what_without_content_to_admins(api: RunningApi, keys: dict[str, str]) -> None:
    # Given alice writing and changing, and the admin deleting
    body = {"observations": [_note("a-1", SECRET_WORDS), _note("a-2", SECRET_WORDS + " too")]}
    assert _call(api, keys["alice"], "POST", "/v1/observations", body).is_success
    assert _call(
        api, keys["alice"], "POST", "/v1/observations", {"observations": [_note("a-1", "Changed.")]}
    ).is_success
    assert _call(api, keys["admin"], "DELETE", "/v1/observations/a-2").is_success
    # When the admin reads the audit trail, whole and filtered, a page at a time
    whole = _call(api, keys["admin"], "GET", "/v1/audit?limit=500")
    alice = _call(api, keys["admin"], "GET", "/v1/audit?key=alice&limit=500").json()["entries"]
    deletes = _call(api, keys["admin"], "GET", "/v1/audit?action=delete&limit=500").json()["entries"]
    first = _call(api, keys["admin"], "GET", "/v1/audit?limit=1").json()
    second = _call(api, keys["admin"], "GET", f"/v1/audit?limit=1&cursor={first['nextCursor']}").json()
    # Then each is there, newest first, with the key's name and ids, and no content anywhere
    assert whole.status_code == 200
    entries = whole.json()["entries"]
    assert (entries[0]["key"], entries[0]["action"], entries[0]["ids"]) == ("ops", "delete", ["a-2"])
    assert {(e["action"], tuple(e["ids"])) for e in alice} >= {("write", ("a-1", "a-2")), ("change", ("a-1",))}
    assert {e["key"] for e in alice} == {"alice"}
    assert [e["ids"] for e in deletes if e["key"] == "ops"][0] == ["a-2"]
    assert first["entries"][0]["id"] == entries[0]["id"] and second["entries"][0]["id"] == entries[1]["id"]
    assert "staging database" not in whole.text and "Changed." not in whole.text
    # And bad filters are a 400 naming the field, a writer's request a 403
    assert _call(api, keys["admin"], "GET", "/v1/audit?action=drop").json()["error"]["details"][0]["field"] == "action"
    _refused(_call(api, keys["alice"], "GET", "/v1/audit"), "admin")
