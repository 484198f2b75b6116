"""The ``LlmProvider`` on Claude: one forced tool call through the official ``anthropic`` SDK
(``tool_choice`` names the tool), shared by the relevance gate, the filter inference and answers.
The reply counts only as that tool's input, and every way the call can fail (no key, a timeout,
an API error, a reply without the tool call) is one ``ToolCallFailed`` with a reason the caller
reports. The SDK is imported on first use.

A sampling temperature, when the caller gives one, goes in the request body (``extra_body``): the
installed SDK (2.x, API version 2026-10-21) has no ``temperature`` argument any more. A model that
answers 400 naming ``temperature`` gets the same call again without it, and is remembered for the
life of the process, so that only its first call pays for the refusal; the refusal is logged
(``base.with_temperature``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.errors import ConfigurationError
from neural_memory.providers.llm.base import ToolCallFailed, status_reason, with_temperature
from neural_memory.providers.sdk_clients import lazy_anthropic

if TYPE_CHECKING:
    from neural_memory.providers.sdk_clients import ApiKey, LazyClient

__all__ = ["DEFAULT_MODEL", "AnthropicProvider", "ToolCallFailed", "forced_tool_input"]
DEFAULT_MODEL = "claude-haiku-4-5"

# Models that refused a temperature in this process: it is never sent to them again.
_REFUSES_TEMPERATURE: set[str] = set()


class AnthropicProvider:
    """``LlmProvider`` on the Messages API, with a time budget and no retries."""

    name = "anthropic"

    def __init__(
        self, api_key: ApiKey, model: str = DEFAULT_MODEL, timeout_s: float = 3.0, http_client: Any = None
    ) -> None:
        """``http_client`` is an ``httpx2.Client`` (the SDK's transport); tests pass a mock one."""
        self.model = model
        self._client = lazy_anthropic(api_key, timeout_s, http_client)

    def forced_tool_input(
        self, *, system: str, tool: dict[str, Any], prompt: str, max_tokens: int, temperature: float | None = None
    ) -> Any:
        """See ``LlmProvider.forced_tool_input``."""
        return forced_tool_input(
            self._client,
            model=self.model,
            system=system,
            tool=tool,
            prompt=prompt,
            max_tokens=max_tokens,
            temperature=temperature,
        )


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
        raise ToolCallFailed("error", str(exc), provider="anthropic") from exc
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "tools": [tool],
        "tool_choice": {"type": "tool", "name": tool["name"]},
        "messages": [{"role": "user", "content": prompt}],
    }

    def create(sampled: float | None) -> Any:
        extra = {} if sampled is None else {"extra_body": {"temperature": sampled}}
        return sdk.messages.create(**params, **extra)

    try:
        message = with_temperature(
            create,
            model=model,
            temperature=temperature,
            refusers=_REFUSES_TEMPERATURE,
            refused=lambda exc: isinstance(exc, anthropic.BadRequestError) and "temperature" in str(exc),
            provider="anthropic",
        )
    except anthropic.APITimeoutError as exc:
        raise ToolCallFailed("timeout", "LLM call exceeded its time budget", provider="anthropic") from exc
    except anthropic.APIError as exc:
        why = status_reason(getattr(exc, "status_code", None), type(exc).__name__)
        raise ToolCallFailed("error", f"LLM call failed: {why}", provider="anthropic") from exc
    blocks = [b for b in getattr(message, "content", None) or [] if getattr(b, "type", None) == "tool_use"]
    block = next((b for b in blocks if getattr(b, "name", None) == tool["name"]), None)
    if block is None:
        raise ToolCallFailed("error", "reply has no tool call", replied=True, provider="anthropic")
    return block.input
