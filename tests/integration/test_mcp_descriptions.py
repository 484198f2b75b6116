"""What the MCP tools tell the model agrees with their schemas: every field a description names
exists in the tool's schemas (a JSON example's keys in its input schema; a name in prose in its
input or output schema, or a memory's as get_memory returns it: a filter may name the field of a
memory it tests), and every default a description states is the schema's."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from mcp import Client
from neural_memory.local.client import AsyncNeuralMemoryClient
from neural_memory.local.mcp_server.backends import RemoteBackend
from neural_memory.local.mcp_server.tools import INSTRUCTIONS, build_server

pytestmark = pytest.mark.integration

# Words of descriptions that look like field names: camelCase, or a quoted JSON key.
CAMEL = re.compile(r"\b[a-z]+(?:[A-Z][a-z0-9]*)+\b")
JSON_KEY = re.compile(r'"([A-Za-z_]+)"\s*:')
STATED_DEFAULT = re.compile(r"^(\w+) \(default", re.MULTILINE)
# A field's other accepted spelling, introduced as such ("also accepted under its first name, `sourceTypes`")
ALIAS = re.compile(r"under its (?:first|older) name, `(\w+)`")
TOOL_NAMES = {"get_memory", "search_memory", "answer_question", "who_knows", "trace_decision"}


# What every model request of every session carries: the tools' definitions as tools/list gives them
TOOL_DEFINITIONS_LIMIT = 8_000


def _tools(structured_content: bool = True) -> list[Any]:
    # A backend that is never called: listing tools makes no request
    backend = RemoteBackend(AsyncNeuralMemoryClient("http://127.0.0.1:9", "nm_000000000000_" + "A" * 43))
    # (with the output schemas, to read their fields, unless asked for the default listing)
    server = build_server(backend, structured_content=structured_content)

    async def listed() -> list[Any]:
        async with Client(server) as agent:
            return list((await agent.list_tools()).tools)

    return anyio.run(listed)


def _properties(schema: Any) -> set[str]:
    """Every property name anywhere in a JSON schema (nested objects and $defs included)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                found |= set(value)
            found |= _properties(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= _properties(value)
    return found


def _descriptions(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        own = [schema["description"]] if isinstance(schema.get("description"), str) else []
        return own + [d for value in schema.values() for d in _descriptions(value)]
    if isinstance(schema, list):
        return [d for value in schema for d in _descriptions(value)]
    return []


def test_every_field_a_description_names_is_in_the_tools_schema() -> None:
    tools = _tools()
    memory = next(_properties(tool.output_schema) for tool in tools if tool.name == "get_memory")
    for tool in tools:
        inputs, outputs = _properties(tool.input_schema), _properties(tool.output_schema) | memory
        texts = [tool.description or "", *_descriptions(tool.input_schema)]
        keys = {key for text in texts for key in JSON_KEY.findall(text)}
        assert keys <= inputs, f"{tool.name}: its examples send {sorted(keys - inputs)}, which its input schema lacks"
        aliases = {word for text in texts for word in ALIAS.findall(text)}
        named = {word for text in texts for word in CAMEL.findall(ALIAS.sub("", text))} - TOOL_NAMES - aliases
        unknown = named - inputs - outputs
        assert not unknown, f"{tool.name}: its descriptions name {sorted(unknown)}, which its schemas do not have"


def test_every_default_a_description_states_is_the_schemas_default() -> None:
    for tool in _tools():
        for name, field in tool.input_schema["properties"].items():
            description = field.get("description", "")
            if (stated := STATED_DEFAULT.search(description)) and "default" in field:
                assert stated.group(1) == str(field["default"]), (
                    f"{tool.name}.{name}: says {stated.group(1)}, is {field['default']}"
                )
            if found := re.search(r"\(default (\d+)\)", description):
                assert int(found.group(1)) == field["default"], f"{tool.name}.{name}: says {found.group(1)}"


def test_the_instructions_name_only_tools_that_exist() -> None:
    names = {tool.name for tool in _tools()}
    assert set(re.findall(r"\b[a-z]+_[a-z_]+\b", INSTRUCTIONS)) <= names


def test_the_tools_definitions_a_model_is_sent_stay_under_the_limit() -> None:
    # Given the tools as the MCP server lists them by default (no output schemas: what Claude Code sends)
    tools = _tools(structured_content=False)
    # When they are serialised as tools/list returns them (name, title, description, input schema, annotations)
    listed = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
    size = len(json.dumps(listed))
    # Then all seven together stay under the limit (they were 30,041 characters before issue 53)
    assert len(listed) == 7
    assert size <= TOOL_DEFINITIONS_LIMIT, f"the tools' definitions are {size} characters"
    # And each still says what it is for and asks for what it needs
    for tool in listed:
        assert len(tool["description"]) >= 50 and tool["inputSchema"]["required"], tool["name"]
