"""The MCP tools an agent sees: what each is for, its arguments, and its reply as compact text
for the model (ids, titles, dates, short snippets: ``summaries.py``). The one place the tools are
defined, whatever the transport (stdio, streamable HTTP).

The API's reply model as structured content is off by default: a client that has it sends the
model the structured content instead of the text (Claude Code does: the model read the whole JSON,
~1.6 KB for three results, instead of the summary). ``structured_content=True`` (``neural-memory
mcp --structured-content``) adds it, with each tool's output schema, for applications that read
the JSON.

Arguments use the API's names (``topK``, ``filters.sources``…, docs/api.md); every field a
description names is in the tool's schema (tests/integration/test_mcp_descriptions.py). A call the
backend refuses comes back as a tool error whose text is the error envelope's code and message;
the server itself carries on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from neural_memory import __version__
from neural_memory.clock import utcnow
from neural_memory.mcp_server.backends import BackendFailure
from neural_memory.mcp_server.summaries import (
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
from neural_memory.models.agent_notes import AgentNote  # noqa: TC001 (the SDK reads the tool's signature at run time)
from neural_memory.models.types import RerankMode

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from datetime import datetime

    from mcp.server.mcpserver import Context
    from mcp_types import InputRequiredResult
    from pydantic import BaseModel

    from neural_memory.mcp_server.backends import MemoryBackend

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
    "best memories (read them with get_memory). Use it to find whom to ask, or whose decision to look at."
)
Reply = TypeVar("Reply")
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


def _result(text: str, reply: BaseModel, structured: bool) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=reply.model_dump(mode="json", by_alias=True) if structured else None,
    )


async def _served(call: Awaitable[Reply]) -> Reply:
    try:
        return await call
    except BackendFailure as exc:
        raise ToolError(str(exc)) from None  # the envelope's code and message: all the model needs


def _asking(text_field: str, text: str, top_k: int, mode: str, filters: SearchFilters | None) -> dict[str, Any]:
    body: dict[str, Any] = {text_field: text, "topK": top_k, "mode": mode}
    if filters is not None:
        body["filters"] = filters.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return body


class MemoryServer(MCPServer):
    """The SDK's server, except that arguments failing the tools' schemas are refused as the API
    refuses a body: ``validation_error: <field>: <message>``, not pydantic's multi-line dump (a
    link to errors.pydantic.dev is no use to a model deciding what to send next)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(cause := exc.__cause__, ValidationError):
                raise
            from neural_memory.api.resolver import validation_failure

            error, _ = validation_failure(cause.errors(), located=False)  # arguments: no location part
            raise ToolError(f"{error.code}: {error}") from cause  # the cause: the SDK logs field names only


def build_server(
    backend: MemoryBackend, clock: Callable[[], datetime] = utcnow, *, structured_content: bool = False
) -> MCPServer:
    """An MCP server whose tools call ``backend``; with ``structured_content``, each reply also carries
    the API's reply model (and each tool its output schema), for applications that read it."""
    structured = structured_content
    server = MemoryServer("neural-memory", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    reading = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(
        name="search_memory",
        title="Search memory",
        description=SEARCH_DESCRIPTION,
        annotations=reading,
        structured_output=structured,
    )
    async def search_memory(
        query: Annotated[str, Field(description="What to look for, in natural language or keywords.")],
        filters: Filters = None,
        topK: Annotated[int, Field(ge=1, le=100, description="How many memories at most (default 10).")] = 10,
        mode: Mode = "hybrid",
        rerank: Rerank = "balanced",
    ) -> Annotated[CallToolResult, SearchResponse]:
        reply = await _served(backend.search(_asking("query", query, topK, mode, filters) | {"rerank": rerank}))
        return _result(search_summary(query, reply), reply, structured)

    @server.tool(
        name="answer_question",
        title="Answer from memory",
        description=ANSWER_DESCRIPTION,
        annotations=reading,
        structured_output=structured,
    )
    async def answer_question(
        question: Annotated[str, Field(description="The question, in natural language.")],
        filters: Filters = None,
        topK: Annotated[int, Field(ge=1, le=20, description="How many memories to answer from (default 5).")] = 5,
        mode: Mode = "hybrid",
    ) -> Annotated[CallToolResult, AnswerResponse]:
        reply = await _served(backend.answer(_asking("question", question, topK, mode, filters)))
        return _result(answer_summary(reply), reply, structured)

    @server.tool(
        name="remember",
        title="Remember",
        description=REMEMBER_DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
        structured_output=structured,
    )
    async def remember(
        observations: Annotated[
            list[AgentNote], Field(min_length=1, max_length=100, description="One or more memories to store.")
        ],
    ) -> Annotated[CallToolResult, ObservationsResponse]:
        now = clock()
        reply = await _served(backend.add([note.observation(now) for note in observations]))
        return _result(remember_summary(reply), reply, structured)

    @server.tool(
        name="get_memory",
        title="Read a memory",
        description=GET_DESCRIPTION,
        annotations=reading,
        structured_output=structured,
    )
    async def get_memory(
        id: Annotated[str, Field(min_length=1, description="The memory's id.")],
    ) -> Annotated[CallToolResult, ObservationOut]:
        reply = await _served(backend.get(id))
        return _result(memory_summary(reply), reply, structured)

    @server.tool(
        name="forget",
        title="Forget a memory",
        description=FORGET_DESCRIPTION,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False),
        structured_output=structured,
    )
    async def forget(
        id: Annotated[str, Field(min_length=1, description="The id of the memory to delete.")],
    ) -> Annotated[CallToolResult, DeleteResponse]:
        reply = await _served(backend.delete(id))
        return _result(forget_summary(reply), reply, structured)

    @server.tool(
        name="who_knows",
        title="Who knows",
        description=WHO_KNOWS_DESCRIPTION,
        annotations=reading,
        structured_output=structured,
    )
    async def who_knows(
        query: Annotated[
            str,
            Field(description="The subject, or the question as asked (who knows about X?): its subject is searched."),
        ],
        filters: Filters = None,
        topK: Annotated[int, Field(ge=1, le=20, description="How many people at most (default 5).")] = 5,
        mode: ExpertsMode = "keyword",
    ) -> Annotated[CallToolResult, ExpertsResponse]:
        reply = await _served(backend.experts(_asking("query", query, topK, mode, filters)))
        return _result(experts_summary(query, reply), reply, structured)

    @server.tool(
        name="trace_decision",
        title="Trace why it changed",
        description=TRACE_DESCRIPTION,
        annotations=reading,
        structured_output=structured,
    )
    async def trace_decision(
        id: Annotated[str, Field(min_length=1, description="The id of the memory to trace.")],
    ) -> Annotated[CallToolResult, LineageResponse]:
        reply = await _served(backend.lineage(id))
        return _result(lineage_summary(reply), reply, structured)

    return server
