"""The ``LlmProvider`` on OpenAI: one forced function call through the official ``openai`` SDK
(Chat Completions, ``tool_choice`` naming the function), the same contract as Claude's tool use.

Why a forced function call rather than ``response_format: json_schema``: it is the same contract
as the Anthropic side (one named tool whose arguments are the reply, the same schema and system
prompts that say "call X once"), and the schemas stay as they are. OpenAI's ``strict`` mode is not
used: it requires every property to be required and every object closed, which the optional
filters of ``autoFilters`` are not; every caller validates the arguments itself (pydantic, known
ids, known values), so a reply off the schema fails there, as it does with Claude.

A sampling temperature, when the caller gives one, is sent as Chat Completions' own
``temperature``. A model that answers 400 naming it (the reasoning models take only their
default) gets the same call again without it and is remembered for the life of the process, as
on the Anthropic side (``base.with_temperature``).

The SDK is imported on first use; no retries (every caller has a faster fallback than a retry).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from neural_memory.errors import ConfigurationError
from neural_memory.providers.llm.base import ToolCallFailed, status_reason, with_temperature
from neural_memory.providers.sdk_clients import lazy_openai

if TYPE_CHECKING:
    from neural_memory.providers.sdk_clients import ApiKey

DEFAULT_MODEL = "gpt-4.1-mini"

# Models that refused a temperature in this process: it is never sent to them again.
_REFUSES_TEMPERATURE: set[str] = set()


class OpenAIProvider:
    """``LlmProvider`` on OpenAI's Chat Completions API, with a time budget and no retries."""

    name = "openai"

    def __init__(
        self, api_key: ApiKey, model: str = DEFAULT_MODEL, timeout_s: float = 3.0, http_client: Any = None
    ) -> None:
        """``http_client`` is an ``httpx2.Client`` (the SDK's transport); tests pass a mock one."""
        self.model = model
        self._client = lazy_openai(api_key, timeout_s, http_client)

    def forced_tool_input(
        self, *, system: str, tool: dict[str, Any], prompt: str, max_tokens: int, temperature: float | None = None
    ) -> Any:
        """See ``LlmProvider.forced_tool_input``: the function's arguments, parsed from JSON."""
        import openai

        try:
            sdk = self._client.get()
        except ConfigurationError as exc:  # no key, or its secret cannot be read
            raise ToolCallFailed("error", str(exc), provider=self.name) from exc
        function = {"name": tool["name"], "description": tool.get("description", "")}
        function["parameters"] = tool["input_schema"]
        params: dict[str, Any] = {
            "model": self.model,
            "max_completion_tokens": max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            "tools": [{"type": "function", "function": function}],
            "tool_choice": {"type": "function", "function": {"name": tool["name"]}},
        }

        def create(sampled: float | None) -> Any:
            return sdk.chat.completions.create(**params, **({} if sampled is None else {"temperature": sampled}))

        try:
            completion = with_temperature(
                create,
                model=self.model,
                temperature=temperature,
                refusers=_REFUSES_TEMPERATURE,
                refused=lambda exc: isinstance(exc, openai.BadRequestError) and "temperature" in str(exc),
                provider=self.name,
            )
        except openai.APITimeoutError as exc:
            raise ToolCallFailed("timeout", "LLM call exceeded its time budget", provider=self.name) from exc
        except openai.APIError as exc:
            why = status_reason(getattr(exc, "status_code", None), type(exc).__name__)
            raise ToolCallFailed("error", f"LLM call failed: {why}", provider=self.name) from exc
        return _arguments(completion, tool["name"])


def _arguments(completion: Any, name: str) -> Any:
    """The named function call's arguments, or ``ToolCallFailed`` (the reply is the model's: not
    tried again elsewhere)."""
    choices = getattr(completion, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    calls = getattr(message, "tool_calls", None) or []
    call = next((c for c in calls if getattr(getattr(c, "function", None), "name", None) == name), None)
    if call is None:
        raise ToolCallFailed("error", "reply has no tool call", replied=True, provider="openai")
    try:
        return json.loads(call.function.arguments)
    except (TypeError, ValueError) as exc:
        raise ToolCallFailed("error", "tool arguments are not JSON", replied=True, provider="openai") from exc
