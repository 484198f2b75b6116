"""The seven tools an agent sees, declared once: name, title, description, arguments (a pydantic
model: the input schema, and the validation of a call), annotations and the text the model reads
from its reply (``summaries.py``). The operation a tool runs, and so its reply model (the output
schema under ``--structured-content``), is the API's (``api/routes.OPERATIONS``: its ``tool``).
Every transport lists and calls these.

Arguments use the API's names (``topK``, ``filters.sources``..., docs/api.md); every field a
description names is in the tool's schemas (tests/integration/test_mcp_descriptions.py). Each
arguments model is titled as the SDK titled the schema it derived from a tool function's
signature before the tools were declared here, so what the stdio server lists did not change."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from neural_memory.agent_tools.summaries import (
    answer_summary,
    experts_summary,
    forget_summary,
    lineage_summary,
    memory_summary,
    remember_summary,
    search_summary,
)
from neural_memory.models import (
    SearchFilters,
)
from neural_memory.models.agent_notes import AgentNote
from neural_memory.models.types import RerankMode
from neural_memory.operations import BY_TOOL, reply_model

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from datetime import datetime

SERVER_NAME = "neural-memory"
INSTRUCTIONS = (
    "Neural Memory is the team's long-term memory: decisions, notes, GitHub pull requests and pushes, "
    "deployments and earlier conversations, shared by every agent and person of the workspace. Search it "
    "before answering questions about past work, why something is the way it is, or what went wrong; "
    "remember what future sessions should know (a decision and its reason, a fix, a user preference). "
    "Every memory has an id: quote it to get_memory for the full text, or to forget."
)

# What the model is taught, sent with every request of every session: what each tool is for and its
# one or two most useful arguments (the listing's schemas below). Every other argument of the
# arguments models is still accepted; docs/api.md teaches people the rest.
SEARCH_DESCRIPTION = (
    "Search the team's memory (decisions, notes, pull requests, pushes, deployments, earlier "
    "conversations) by meaning and keywords: before answering about past work, a decision, an incident "
    "or why code is as it is. Best first, each with its id (get_memory reads one in full). Narrow with "
    'filters, e.g. {"sources": ["github"], "dateRange": {"start": "2025-12-01T00:00:00Z"}}.'
)
ANSWER_DESCRIPTION = (
    "Answer a direct question (why did the deploy fail? what did we decide about X?) from the team's "
    "memory, citing the memories it quotes by id. Use search_memory to browse."
)
REMEMBER_DESCRIPTION = (
    "Store memories for future sessions and teammates: a decision and its reason, a fix and its cause, a "
    "convention, a preference. Write self-contained sentences (found later by meaning, without this "
    "conversation). Give supersedes to retire older memories this one corrects. Returns the ids."
)
GET_DESCRIPTION = "Read one memory in full by the id another tool returned."
FORGET_DESCRIPTION = (
    "Delete one memory for good, when the user asks to forget it or it is wrong (to correct one, remember "
    "a new memory that supersedes it)."
)
TRACE_DESCRIPTION = (
    "Why did this change? A memory's history, oldest first: the versions it replaced or that replaced it, "
    "and the pushes, pull requests and deployments linked to it. Give an id search_memory found."
)
WHO_KNOWS_DESCRIPTION = (
    "Who knows about a subject? The people whose decisions, pull requests and pushes match it, best "
    "first, with their evidence's ids. Asked 'who knows X lately?' (or 'last year'), it keeps to that "
    "period."
)

_TEXT = {"type": "string"}
_TEXTS = {"type": "array", "items": _TEXT}
# The filters a model needs; every other filter of SearchFilters (tiers, not, anyOf, metadata,
# fresh...) is accepted as well: the schema leaves the object open.
_TAUGHT_FILTERS = {
    "type": "object",
    "description": "Optional, combined with AND.",
    "properties": {
        "sources": _TEXTS,
        "observationTypes": _TEXTS,
        "actorNames": _TEXTS,
        "dateRange": {"type": "object", "properties": {"start": _TEXT, "end": _TEXT}},
    },
}


def _taught(required: str, properties: dict[str, Any]) -> dict[str, Any]:
    """A listing's input schema: the arguments taught, ``required`` first (the object stays open:
    what is not taught is validated by the tool's arguments model)."""
    return {"type": "object", "properties": properties, "required": [required]}


def _count(default: int, most: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "maximum": most, "default": default}


def _an_id(description: str) -> dict[str, Any]:
    return _taught("id", {"id": {"type": "string", "description": description}})


_MODE = {"enum": ["hybrid", "semantic", "keyword"], "default": "hybrid", "description": "keyword: exact names"}
TAUGHT_SEARCH = _taught("query", {"query": _TEXT, "filters": _TAUGHT_FILTERS, "topK": _count(10, 100), "mode": _MODE})
TAUGHT_ANSWER = _taught("question", {"question": _TEXT, "filters": _TAUGHT_FILTERS, "topK": _count(5, 20)})
TAUGHT_REMEMBER = _taught(
    "observations",
    {
        "observations": {
            "type": "array",
            "minItems": 1,
            "maxItems": 100,
            "items": {
                "type": "object",
                "properties": {
                    "content": _TEXT,
                    "title": _TEXT,
                    "observationType": {"type": "string", "description": "note (default), decision, bug..."},
                    "supersedes": _TEXTS,
                },
                "required": ["content"],
            },
        }
    },
)
TAUGHT_WHO_KNOWS = _taught("query", {"query": _TEXT, "topK": _count(5, 20)})

Mode = Annotated[
    Literal["hybrid", "semantic", "keyword"],
    Field(description="hybrid (default: meaning and keywords), semantic (meaning only) or keyword (exact words)"),
]
ExpertsMode = Annotated[
    Literal["hybrid", "semantic", "keyword"],
    Field(description="How the candidates are found: keyword (default: who worked on the subject's words and files, "
          "measured best on real histories), hybrid (also loosely related neighbours) or semantic (meaning only)"),
]  # fmt: skip
Rerank = Annotated[
    RerankMode,
    Field(description="How to reorder the candidates: fast (no rerank), balanced (default: Cohere where configured), "
          "thorough (Cohere, then the LLM decides), local (a cross-encoder pulled with `neural-memory models pull`). "
          "Without its provider a mode does what it can (thorough: the LLM alone; at least fast); the reply's "
          "`degraded` says so."),
]  # fmt: skip
Filters = Annotated[
    SearchFilters | None,
    Field(description="Optional filters, combined with AND (docs/api.md): sources, observationTypes, "
          "actorNames, tiers, dateRange {start, end}, not {...}, metadata {key: value}, anyOf [...], fresh (true: "
          "leave out memories a later push made stale; false: only those, to list what went stale)."),
]  # fmt: skip


class SearchArguments(BaseModel):
    model_config = ConfigDict(title="search_memoryArguments")

    query: Annotated[str, Field(description="What to look for, in natural language or keywords.")]
    filters: Filters = None
    topK: Annotated[int, Field(ge=1, le=100, description="How many memories at most (default 10).")] = 10
    mode: Mode = "hybrid"
    rerank: Rerank = "balanced"


class AnswerArguments(BaseModel):
    model_config = ConfigDict(title="answer_questionArguments")

    question: Annotated[str, Field(description="The question, in natural language.")]
    filters: Filters = None
    topK: Annotated[int, Field(ge=1, le=20, description="How many memories to answer from (default 5).")] = 5
    mode: Mode = "hybrid"


class RememberArguments(BaseModel):
    model_config = ConfigDict(title="rememberArguments")

    observations: Annotated[
        list[AgentNote], Field(min_length=1, max_length=100, description="One or more memories to store.")
    ]


class GetArguments(BaseModel):
    model_config = ConfigDict(title="get_memoryArguments")

    id: Annotated[str, Field(min_length=1, description="The memory's id.")]


class ForgetArguments(BaseModel):
    model_config = ConfigDict(title="forgetArguments")

    id: Annotated[str, Field(min_length=1, description="The id of the memory to delete.")]


class WhoKnowsArguments(BaseModel):
    model_config = ConfigDict(title="who_knowsArguments")

    query: Annotated[
        str,
        Field(description="The subject, or the question as asked (who knows about X?): its subject is searched."),
    ]
    filters: Filters = None
    topK: Annotated[int, Field(ge=1, le=20, description="How many people at most (default 5).")] = 5
    mode: ExpertsMode = "keyword"


class TraceArguments(BaseModel):
    model_config = ConfigDict(title="trace_decisionArguments")

    id: Annotated[str, Field(min_length=1, description="The id of the memory to trace.")]


READING = {"readOnlyHint": True, "openWorldHint": False}


@dataclass(frozen=True)
class Tool:
    """One tool: what the agent is told, and how a call becomes a use case of the memory and its
    reply the text the model reads. ``request`` turns the validated arguments (and the time now,
    a memory's default time) into the use case's input; ``summary`` the arguments and the use
    case's reply into text."""

    name: str
    title: str
    description: str
    arguments: type[BaseModel]
    request: Callable[[Any, datetime], Any]
    summary: Callable[[Any, Any], str]
    annotations: Mapping[str, bool]
    taught: Mapping[str, Any]

    @property
    def operation(self) -> str:
        """The API operation the tool runs (``api/routes.OPERATIONS``)."""
        return BY_TOOL[self.name].name

    @property
    def reply(self) -> type[BaseModel]:
        """The operation's reply model."""
        return reply_model(BY_TOOL[self.name])

    @property
    def input_schema(self) -> dict[str, Any]:
        """The listing's input schema: the arguments the model is taught (``arguments`` validates a call)."""
        return dict(self.taught)

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        return self.reply.model_json_schema(by_alias=True)

    def listing(self, *, structured: bool) -> dict[str, Any]:
        """The tool as ``tools/list`` gives it (MCP's ``Tool``); with ``structured``, its output schema too."""
        entry: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": dict(self.annotations),
        }
        if structured:
            entry["outputSchema"] = self.output_schema
        return entry


def _asking(text_field: str, text: str, top_k: int, mode: str, filters: SearchFilters | None) -> dict[str, Any]:
    body: dict[str, Any] = {text_field: text, "topK": top_k, "mode": mode}
    if filters is not None:
        body["filters"] = filters.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return body


def _search(arguments: SearchArguments, now: datetime) -> dict[str, Any]:
    asking = _asking("query", arguments.query, arguments.topK, arguments.mode, arguments.filters)
    return asking | {"rerank": arguments.rerank}


def _answer(arguments: AnswerArguments, now: datetime) -> dict[str, Any]:
    return _asking("question", arguments.question, arguments.topK, arguments.mode, arguments.filters)


def _who_knows(arguments: WhoKnowsArguments, now: datetime) -> dict[str, Any]:
    return _asking("query", arguments.query, arguments.topK, arguments.mode, arguments.filters)


def _remember(arguments: RememberArguments, now: datetime) -> dict[str, Any]:
    return {"observations": [note.observation(now) for note in arguments.observations]}


def _by_id(arguments: GetArguments | ForgetArguments | TraceArguments, now: datetime) -> str:
    return arguments.id


TOOLS: tuple[Tool, ...] = (
    Tool("search_memory", "Search memory", SEARCH_DESCRIPTION, SearchArguments, _search,
         lambda arguments, reply: search_summary(arguments.query, reply), READING, TAUGHT_SEARCH),
    Tool("answer_question", "Answer from memory", ANSWER_DESCRIPTION, AnswerArguments, _answer,
         lambda arguments, reply: answer_summary(reply), READING, TAUGHT_ANSWER),
    Tool("remember", "Remember", REMEMBER_DESCRIPTION, RememberArguments, _remember,
         lambda arguments, reply: remember_summary(reply),
         {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}, TAUGHT_REMEMBER),
    Tool("get_memory", "Read a memory", GET_DESCRIPTION, GetArguments, _by_id,
         lambda arguments, reply: memory_summary(reply), READING, _an_id("A memory's id.")),
    Tool("forget", "Forget a memory", FORGET_DESCRIPTION, ForgetArguments, _by_id,
         lambda arguments, reply: forget_summary(reply),
         {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}, _an_id("The memory to delete.")),
    Tool("who_knows", "Who knows", WHO_KNOWS_DESCRIPTION, WhoKnowsArguments, _who_knows,
         lambda arguments, reply: experts_summary(arguments.query, reply), READING, TAUGHT_WHO_KNOWS),
    Tool("trace_decision", "Trace why it changed", TRACE_DESCRIPTION, TraceArguments, _by_id,
         lambda arguments, reply: lineage_summary(reply), READING, _an_id("The memory to trace.")),
)  # fmt: skip
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
