"""One forced tool call to Claude through the official SDK, shared by the relevance gate, the
filter inference and answers: the reply counts only as that tool's input, and every way the call
can fail (no key, a timeout, an API error, a reply without the tool call) is one
``ToolCallFailed`` with a reason the caller reports. The SDK is imported on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from neural_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from neural_memory.providers.sdk_clients import LazyClient


class ToolCallFailed(Exception):
    """No trustworthy tool input could be had; ``reason`` is ``timeout`` or ``error``."""

    def __init__(self, reason: Literal["timeout", "error"], detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason: Literal["timeout", "error"] = reason
        self.detail = detail


def forced_tool_input(
    client: LazyClient, *, model: str, system: str, tool: dict[str, Any], prompt: str, max_tokens: int
) -> Any:
    """The input Claude gave ``tool`` (called with ``tool_choice`` forcing it), as sent: the caller
    validates it. No temperature is sent: current models refuse it."""
    import anthropic

    try:
        sdk = client.get()
    except ConfigurationError as exc:  # no key, or its secret cannot be read
        raise ToolCallFailed("error", str(exc)) from exc
    try:
        message = sdk.messages.create(
            model=model,
            max_tokens=max_tokens,
            system=system,
            tools=[tool],
            tool_choice={"type": "tool", "name": tool["name"]},
            messages=[{"role": "user", "content": prompt}],
        )
    except anthropic.APITimeoutError as exc:
        raise ToolCallFailed("timeout", "LLM call exceeded its time budget") from exc
    except anthropic.APIError as exc:
        raise ToolCallFailed("error", f"LLM call failed: {type(exc).__name__}") from exc
    blocks = [b for b in getattr(message, "content", None) or [] if getattr(b, "type", None) == "tool_use"]
    block = next((b for b in blocks if getattr(b, "name", None) == tool["name"]), None)
    if block is None:
        raise ToolCallFailed("error", "reply has no tool call")
    return block.input
