"""The LLM provider contract shared by the relevance gate, LLM rerank, answers and filter inference.

Every caller asks for the same thing: one *forced* tool call — the model must reply by calling the
named tool, and the reply counts only as that tool's input, which the caller validates. A tool is
given in one neutral shape (``name``, ``description``, ``input_schema``: a JSON schema), which each
provider translates into its API (Anthropic tool use, OpenAI function calling).

A caller may ask for a sampling ``temperature`` (the gate and the LLM rerank: the design's 0.1).
Each provider sends it its own way (OpenAI natively, Anthropic in the request body); a model that
answers 400 naming ``temperature`` gets the same call again without it and is remembered for the
life of the process (``with_temperature``), so that only its first call pays for the refusal.

Every way a call can fail (no key, an unreadable secret, a timeout, a rate limit, a server error,
a reply without the tool call) is one ``ToolCallFailed`` with a reason the caller reports; a
provider never retries (every caller has a faster fallback than a retry). ``FallbackProvider``
(``fallback.py``) tries a second provider when the first fails, and names that in ``degraded``
through the collector below.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from neural_memory.observability import logger

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

T = TypeVar("T")

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

    def forced_tool_input(
        self, *, system: str, tool: dict[str, Any], prompt: str, max_tokens: int, temperature: float | None = None
    ) -> Any:
        """The input the model gave ``tool`` (forced to call it), as sent: the caller validates it.
        ``temperature`` (None: the model's default) is sent unless the model refused one before.
        Raises ``ToolCallFailed``."""
        ...


def status_reason(status: int | None, error_name: str) -> str:
    """How a failed call is named in ``degraded``: ``429 RateLimitError``, ``500 InternalServerError``."""
    return f"{status} {error_name}" if status else error_name


def with_temperature(
    call: Callable[[float | None], T],
    *,
    model: str,
    temperature: float | None,
    refusers: set[str],
    refused: Callable[[Exception], bool],
    provider: str,
) -> T:
    """``call(temperature)``; when that raises an error ``refused`` recognises as the model refusing
    a temperature (a 400 naming it), ``call(None)`` instead, and ``model`` joins ``refusers`` (the
    provider's, for the life of the process) so that it is never offered one again. The refusal
    is logged with the provider's error. No temperature, or a model in ``refusers``: ``call(None)``."""
    if temperature is None or model in refusers:
        return call(None)
    try:
        return call(temperature)
    except Exception as exc:
        if not refused(exc):
            raise
        refusers.add(model)
        logger.warning(
            "the model refused a temperature; calling it without one from now on",
            extra={"provider": provider, "model": model, "temperature": temperature, "provider_error": str(exc)[:300]},
        )
    return call(None)


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
