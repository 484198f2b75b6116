"""One forced tool call to Claude through the official SDK, shared by the relevance gate, the
filter inference and answers: the reply counts only as that tool's input, and every way the call
can fail (no key, a timeout, an API error, a reply without the tool call) is one
``ToolCallFailed`` with a reason the caller reports. The SDK is imported on first use.

A sampling temperature, when the caller gives one, goes in the request body (``extra_body``): the
installed SDK (2.x, API version 2026-10-21) has no ``temperature`` argument any more. A model that
answers 400 naming ``temperature`` gets the same call again without it, and is remembered for the
life of the process, so that only its first call pays for the refusal; the refusal is logged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from neural_memory.errors import ConfigurationError
from neural_memory.observability import logger

if TYPE_CHECKING:
    from neural_memory.providers.sdk_clients import LazyClient


# Models that refused a temperature in this process: it is never sent to them again.
_REFUSES_TEMPERATURE: set[str] = set()


class ToolCallFailed(Exception):
    """No trustworthy tool input could be had; ``reason`` is ``timeout`` or ``error``."""

    def __init__(self, reason: Literal["timeout", "error"], detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason: Literal["timeout", "error"] = reason
        self.detail = detail


def forced_tool_input(
    client: LazyClient,
    *,
    model: str,
    system: str,
    tool: dict[str, Any],
    prompt: str,
    max_tokens: int,
    temperature: float | None = None,
) -> Any:
    """The input Claude gave ``tool`` (called with ``tool_choice`` forcing it), as sent: the caller
    validates it. ``temperature`` is sent unless ``model`` refused it before (see the module)."""
    import anthropic

    try:
        sdk = client.get()
    except ConfigurationError as exc:  # no key, or its secret cannot be read
        raise ToolCallFailed("error", str(exc)) from exc
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "tools": [tool],
        "tool_choice": {"type": "tool", "name": tool["name"]},
        "messages": [{"role": "user", "content": prompt}],
    }
    sampled = temperature is not None and model not in _REFUSES_TEMPERATURE
    try:
        try:
            message = sdk.messages.create(**params, **({"extra_body": {"temperature": temperature}} if sampled else {}))
        except anthropic.BadRequestError as exc:
            if not sampled or "temperature" not in str(exc):
                raise
            _REFUSES_TEMPERATURE.add(model)
            logger.warning(
                "the model refused a temperature; calling it without one from now on",
                extra={"model": model, "temperature": temperature, "provider_error": str(exc)[:300]},
            )
            message = sdk.messages.create(**params)
    except anthropic.APITimeoutError as exc:
        raise ToolCallFailed("timeout", "LLM call exceeded its time budget") from exc
    except anthropic.APIError as exc:
        raise ToolCallFailed("error", f"LLM call failed: {type(exc).__name__}") from exc
    blocks = [b for b in getattr(message, "content", None) or [] if getattr(b, "type", None) == "tool_use"]
    block = next((b for b in blocks if getattr(b, "name", None) == tool["name"]), None)
    if block is None:
        raise ToolCallFailed("error", "reply has no tool call")
    return block.input
