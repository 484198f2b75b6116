"""The answer's contract: ``POST /v1/answer``, an answer over search results and the citations it
rests on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, StrictInt, ValidationInfo, field_validator

from neural_memory.models.filters import SearchFilters
from neural_memory.models.search import Latency, LlmStatus, needs_session
from neural_memory.models.types import QueryText, RerankMode, SearchMode, SessionId, Timestamp
from neural_memory.models.wire import RequestModel, WireModel

if TYPE_CHECKING:
    from datetime import datetime


class AnswerRequest(RequestModel):
    """Body of ``POST /v1/answer``."""

    question: QueryText = Field(description="1..2000 characters after trimming")
    filters: SearchFilters | None = None
    top_k: StrictInt = Field(default=5, ge=1, le=20)
    mode: SearchMode = "hybrid"
    rerank: RerankMode = Field(
        default="balanced", description="How the search the answer rests on reranks: as a search's `rerank`."
    )
    exclude_session_id: SessionId | None = None
    exclude_after: Timestamp | None = Field(
        default=None, description="With excludeSessionId: exclude only that session's observations after this moment."
    )

    @field_validator("exclude_after")
    @classmethod
    def _boundary_of_a_session(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        return needs_session(value, info)


class Citation(WireModel):
    """A retrieved observation the answer rests on, with the quoted span and its source url."""

    id: str
    title: str
    url: str | None
    quote: str


class AnswerResponse(WireModel):
    """Reply of ``POST /v1/answer``: every citation id is one of the retrieved observations."""

    request_id: str
    answer: str
    citations: list[Citation]
    method: Literal["llm", "extractive"]
    latency: Latency
    llm: LlmStatus = Field(description="The relevance gate of the search behind the answer.")
    degraded: list[str]
