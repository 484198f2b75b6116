"""The LLM provider that settings choose: ``NM_LLM_PROVIDER`` first, then ``NM_LLM_FALLBACK``
(``Settings.llm_providers``), each with its model and key; nothing is imported or read until the
first call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.providers.llm.claude_tool import AnthropicProvider
from neural_memory.providers.llm.fallback import FallbackProvider
from neural_memory.providers.llm.openai_tool import OpenAIProvider

if TYPE_CHECKING:
    from neural_memory.providers.llm.base import LlmProvider, ProviderName
    from neural_memory.settings import Settings


def build_llm(settings: Settings, timeout_s: float) -> LlmProvider | None:
    """The configured provider (with its fallback), each call within ``timeout_s``; ``None`` when
    no LLM is configured."""
    chain = [_one(settings, name, timeout_s) for name in settings.llm_providers()]
    if not chain:
        return None
    return chain[0] if len(chain) == 1 else FallbackProvider(chain[0], chain[1])


def _one(settings: Settings, name: ProviderName, timeout_s: float) -> LlmProvider:
    if name == "openai":
        return OpenAIProvider(settings.openai_key, model=settings.openai_model, timeout_s=timeout_s)
    return AnthropicProvider(settings.anthropic_key, model=settings.anthropic_model, timeout_s=timeout_s)
