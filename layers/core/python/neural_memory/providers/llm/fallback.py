"""A second LLM provider for when the first fails.

The second is called when the first could not answer: a timeout, a dropped connection, a rate
limit (429), a server error (5xx, Anthropic's 529), or a request it refused (a missing key, an
unreadable secret, 4xx): a provider that is down or misconfigured should not take the LLM stages
down with it. A reply that came back unusable (no tool call, arguments that are not JSON) is the
model's answer and is not asked again elsewhere: the call has already spent its budget, and the
caller's own fallback is faster than a second model.

When the second answers, the reply's ``degraded`` says so (``llm:openai->anthropic
(record_relevance: 429 RateLimitError)``); when both fail, the caller degrades as it does today,
with both reasons in the detail. Worst case, a search waits for both time budgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.observability import logger
from neural_memory.providers.llm.base import ToolCallFailed, note_fallback

if TYPE_CHECKING:
    from neural_memory.providers.llm.base import LlmProvider


class FallbackProvider:
    """``LlmProvider`` that asks ``primary``, then ``secondary`` if ``primary`` failed."""

    def __init__(self, primary: LlmProvider, secondary: LlmProvider) -> None:
        self.primary = primary
        self.secondary = secondary

    @property
    def name(self) -> str:
        """``primary>secondary``."""
        return f"{self.primary.name}>{self.secondary.name}"

    @property
    def model(self) -> str:
        """Both models: a score from either one is a score of this chain."""
        return f"{self.primary.model}>{self.secondary.model}"

    def forced_tool_input(
        self, *, system: str, tool: dict[str, Any], prompt: str, max_tokens: int, temperature: float | None = None
    ) -> Any:
        """The primary's reply, else the secondary's (noted for ``degraded``), each asked with the
        same ``temperature``; raises ``ToolCallFailed`` when the primary's reply was unusable or
        both failed."""
        call: dict[str, Any] = {
            "system": system,
            "tool": tool,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        try:
            return self.primary.forced_tool_input(**call)
        except ToolCallFailed as first:
            if first.replied:
                raise
            why = "timeout" if first.reason == "timeout" else first.detail.removeprefix("LLM call failed: ")
            logger.warning(
                "LLM provider failed; trying the fallback",
                extra={"provider": self.primary.name, "fallback": self.secondary.name, "reason": why},
            )
            try:
                found = self.secondary.forced_tool_input(**call)
            except ToolCallFailed as second:
                detail = f"{self.primary.name}: {first.detail}; {self.secondary.name}: {second.detail}"
                raise ToolCallFailed(
                    "timeout" if first.reason == second.reason == "timeout" else "error",
                    detail,
                    replied=second.replied,
                    provider=self.secondary.name,
                ) from second.__cause__
            note_fallback(f"llm:{self.primary.name}->{self.secondary.name} ({tool['name']}: {why})")
            return found
