"""The seven tools an agent sees, declared once: name, title, description, arguments (a pydantic
model: the input schema, and the validation of a call), annotations, the reply model (the output
schema under ``--structured-content``), which use case of the memory a call runs and the text the
model reads from its reply (``summaries.py``). Every transport lists and calls these.

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
    AnswerResponse,
    DeleteResponse,
    ExpertsResponse,
    LineageResponse,
    ObservationOut,
    ObservationsResponse,
    SearchFilters,
    SearchResponse,
)
from neural_memory.models.agent_notes import AgentNote
from neural_memory.models.types import RerankMode

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

SEARCH_DESCRIPTION = (
    "Search the team's memory (decisions, notes, pull requests, pushes, deployments, earlier "
    "conversations) by meaning and keywords. Use it before answering a question about past work, "
    "an earlier decision, an incident or a person's activity, and before repeating work that may "
    "have been done. Returns the best memories first: id, title, source/type, author, date, score "
    "and a snippet; read one in full with get_memory. Narrow with filters, e.g. "
    '{"sources": ["github"], "observationTypes": ["decision"], "actorNames": ["alice"], '
    '"dateRange": {"start": "2025-12-01T00:00:00Z"}, "not": {"actorNames": ["dependabot[bot]"]}}.'
)
ANSWER_DESCRIPTION = (
    "Answer a question from the team's memory, with citations: each cites a memory id and quotes "
    "its words. Use it for a direct question (why did the deploy fail? what did we decide about "
    "X?) when a short grounded answer is more useful than a list of results; use search_memory to "
    "browse. Without an LLM configured on the memory, the answer is the best sentences of the top "
    "memories (method: extractive)."
)
REMEMBER_DESCRIPTION = (
    "Store one or more memories for future sessions and teammates: a decision and its reason, a "
    "fix and its cause, a convention, a user's preference. Write each as self-contained sentences "
    "(it is found later by meaning, without this conversation). Only content is required; the "
    "title defaults to its first words, the type to note, the source to agent, the time to now. "
    "Give an id to update the same memory later (the same id replaces it); give supersedes to "
    "retire older memories this one corrects. To remember a conversation, store each turn as "
    "observationType conversation_turn with its sessionId and actorName (who said it): each is also "
    "read after the turn before it. Turns are found by meaning for 7 days, then by their exact words "
    "only; to have a conversation found by meaning for good, store its turns with tier A. Returns the ids."
)
GET_DESCRIPTION = (
    "Read one memory in full (title, content, author, time, url, tier, metadata) by the id that "
    "search_memory, answer_question or remember returned."
)
FORGET_DESCRIPTION = (
    "Delete one memory by id, for good (with every chunk of it). Use it when the user asks to "
    "forget something or a memory is wrong and should not be corrected by a newer one (to correct, "
    "remember a new memory with supersedes instead)."
)
TRACE_DESCRIPTION = (
    "Why did this change? Given a memory's id (a deployment, a decision, a pull request...), returns its "
    "history oldest first: the versions it replaced and those that replaced it (supersedes), and the memories "
    "sharing a commit, pull request, issue or deployment with it (e.g. a failed deployment -> the push and "
    "the pull request it carried), each with how it is linked. Use it after search_memory finds the memory."
)
WHO_KNOWS_DESCRIPTION = (
    "Who knows about a subject? Ranks the people (authors of decisions, pull requests, pushes, notes...) by "
    "how relevant their memories are to the query, weighting deciding and landing code above pushing or "
    "deploying, and recent work above old. Returns each person's score, what they did, and the ids of their "
    "best memories (read them with get_memory). Use it to find whom to ask, or whose decision to look at. "
    "Asked 'who knows X lately?' (or 'these days', 'currently', 'last year'), it keeps to that period."
)

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


# The memory's use cases a tool runs: a method of the same name on each backend (``calling.Memory``).
Operation = Literal["search", "answer", "add", "get", "experts", "lineage", "delete"]
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
    reply: type[BaseModel]
    operation: Operation
    request: Callable[[Any, datetime], Any]
    summary: Callable[[Any, Any], str]
    annotations: Mapping[str, bool]

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        return self.arguments.model_json_schema(by_alias=True)

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


def _remember(arguments: RememberArguments, now: datetime) -> list[dict[str, Any]]:
    return [note.observation(now) for note in arguments.observations]


def _by_id(arguments: GetArguments | ForgetArguments | TraceArguments, now: datetime) -> str:
    return arguments.id


TOOLS: tuple[Tool, ...] = (
    Tool("search_memory", "Search memory", SEARCH_DESCRIPTION, SearchArguments, SearchResponse, "search", _search,
         lambda arguments, reply: search_summary(arguments.query, reply), READING),
    Tool("answer_question", "Answer from memory", ANSWER_DESCRIPTION, AnswerArguments, AnswerResponse, "answer",
         _answer, lambda arguments, reply: answer_summary(reply), READING),
    Tool("remember", "Remember", REMEMBER_DESCRIPTION, RememberArguments, ObservationsResponse, "add", _remember,
         lambda arguments, reply: remember_summary(reply),
         {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}),
    Tool("get_memory", "Read a memory", GET_DESCRIPTION, GetArguments, ObservationOut, "get", _by_id,
         lambda arguments, reply: memory_summary(reply), READING),
    Tool("forget", "Forget a memory", FORGET_DESCRIPTION, ForgetArguments, DeleteResponse, "delete", _by_id,
         lambda arguments, reply: forget_summary(reply),
         {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}),
    Tool("who_knows", "Who knows", WHO_KNOWS_DESCRIPTION, WhoKnowsArguments, ExpertsResponse, "experts", _who_knows,
         lambda arguments, reply: experts_summary(arguments.query, reply), READING),
    Tool("trace_decision", "Trace why it changed", TRACE_DESCRIPTION, TraceArguments, LineageResponse, "lineage",
         _by_id, lambda arguments, reply: lineage_summary(reply), READING),
)  # fmt: skip
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
