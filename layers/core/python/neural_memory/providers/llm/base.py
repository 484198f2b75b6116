"""The LLM provider contract shared by the relevance gate, LLM rerank, answers and filter inference.

Every caller asks for the same thing: one *forced* tool call — the model must reply by calling the
named tool, and the reply counts only as that tool's input, which the caller validates. A tool is
given in one neutral shape (``name``, ``description``, ``input_schema``: a JSON schema), which each
provider translates into its API (Anthropic tool use, OpenAI function calling).

Every way a call can fail (no key, an unreadable secret, a timeout, a rate limit, a server error,
a reply without the tool call) is one ``ToolCallFailed`` with a reason the caller reports; a
provider never retries (every caller has a faster fallback than a retry). ``FallbackProvider``
(``fallback.py``) tries a second provider when the first fails, and names that in ``degraded``
through the collector below.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterator

ProviderName = Literal["anthropic", "openai"]


class ToolCallFailed(Exception):
    """No trustworthy tool input could be had; ``reason`` is ``timeout`` or ``error``.

    ``replied`` is True when the provider answered and the answer was unusable (no tool call,
    arguments that are not JSON): that is the model's doing, not the service's, and is not tried
    again elsewhere. ``provider`` names who failed."""

    def __init__(
        self, reason: Literal["timeout", "error"], detail: str, *, replied: bool = False, provider: str = ""
    ) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason: Literal["timeout", "error"] = reason
        self.detail = detail
        self.replied = replied
        self.provider = provider


class LlmProvider(Protocol):
    """One LLM API behind the forced-tool-call contract."""

    @property
    def name(self) -> str:
        """Who answers (``anthropic``, ``openai``, or a chain such as ``openai>anthropic``)."""
        ...

    @property
    def model(self) -> str:
        """The model (for a chain, each one's): part of the gate's cache key."""
        ...

    def forced_tool_input(self, *, system: str, tool: dict[str, Any], prompt: str, max_tokens: int) -> Any:
        """The input the model gave ``tool`` (forced to call it), as sent: the caller validates it.
        Raises ``ToolCallFailed``."""
        ...


def status_reason(status: int | None, error_name: str) -> str:
    """How a failed call is named in ``degraded``: ``429 RateLimitError``, ``500 InternalServerError``."""
    return f"{status} {error_name}" if status else error_name


# ----------------------------------------------------------------------------- fallback notes
# A fallback happens deep in a provider call, but is reported in the reply's ``degraded``: the
# service opens a collector per request, and ``FallbackProvider`` adds a note to it.
_notes: ContextVar[list[str] | None] = ContextVar("llm_fallback_notes", default=None)


@contextmanager
def collecting_fallbacks() -> Iterator[list[str]]:
    """The fallback notes written while the block runs (each once, in order)."""
    notes: list[str] = []
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def note_fallback(note: str) -> None:
    """Record a fallback for the current request (nothing when no collector is open)."""
    notes = _notes.get()
    if notes is not None and note not in notes:
        notes.append(note)
