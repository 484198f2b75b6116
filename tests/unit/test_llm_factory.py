"""Which LLM provider settings choose, with which model and fallback; nothing loads until first use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from neural_memory.providers.llm.claude_tool import AnthropicProvider
from neural_memory.providers.llm.factory import build_llm
from neural_memory.providers.llm.fallback import FallbackProvider
from neural_memory.providers.llm.openai_tool import OpenAIProvider
from neural_memory.settings import Settings

LAYER = str(Path(__file__).resolve().parents[2] / "layers" / "core" / "python")


@pytest.mark.parametrize(
    ("env", "chain"),
    [
        ({}, ()),
        ({"NM_ANTHROPIC_API_KEY": "a"}, ("anthropic",)),
        ({"NM_OPENAI_API_KEY": "o"}, ("openai",)),
        # Both keys: the design's order, each the other's fallback unless told otherwise
        ({"NM_ANTHROPIC_API_KEY": "a", "NM_OPENAI_SECRET_ARN": "arn:o"}, ("openai", "anthropic")),
        ({"NM_ANTHROPIC_SECRET_ARN": "arn:a", "NM_OPENAI_API_KEY": "o", "NM_LLM_PROVIDER": "anthropic"},
         ("anthropic", "openai")),
        ({"NM_ANTHROPIC_API_KEY": "a", "NM_OPENAI_API_KEY": "o", "NM_LLM_FALLBACK": "none"}, ("openai",)),
        # A provider named without its key is still asked (its first call says the key is missing)
        ({"NM_LLM_PROVIDER": "openai", "NM_ANTHROPIC_API_KEY": "a"}, ("openai", "anthropic")),
        ({"NM_ANTHROPIC_API_KEY": "a", "NM_LLM_FALLBACK": "openai"}, ("anthropic", "openai")),
        ({"NM_ANTHROPIC_API_KEY": "a", "NM_LLM_FALLBACK": "anthropic"}, ("anthropic",)),
    ],
)  # fmt: skip
def test_the_provider_chain_follows_the_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], chain: tuple[str, ...]
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert Settings(data_dir=tmp_path).llm_providers() == chain


def test_each_provider_gets_its_model_and_the_stage_its_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given both keys, a model per provider, and the Anthropic model under its old name
    monkeypatch.setenv("NM_GATE_MODEL", "claude-sonnet-4-5")
    settings = Settings(openai_api_key="o", anthropic_api_key="a", openai_model="gpt-4.1")
    # When the gate's provider is built
    provider = build_llm(settings, 0.5)
    # Then OpenAI comes first with its model, Claude stands behind it with NM_GATE_MODEL's
    assert isinstance(provider, FallbackProvider)
    assert isinstance(provider.primary, OpenAIProvider) and provider.primary.model == "gpt-4.1"
    assert isinstance(provider.secondary, AnthropicProvider) and provider.secondary.model == "claude-sonnet-4-5"
    assert provider.name == "openai>anthropic" and provider.model == "gpt-4.1>claude-sonnet-4-5"
    assert build_llm(Settings(anthropic_model="claude-haiku-4-5"), 1.0) is None
    monkeypatch.setenv("NM_ANTHROPIC_MODEL", "claude-opus-4-5")
    assert Settings().anthropic_model == "claude-opus-4-5"  # the new name wins


def test_building_the_service_loads_no_sdk_and_reads_no_secret(tmp_path: Path) -> None:
    # Given both providers configured through secrets, in a fresh interpreter
    probe = (
        "import sys\n"
        "from neural_memory.runtime import build_service\n"
        "from neural_memory.settings import Settings\n"
        f"svc = build_service(Settings(data_dir={str(tmp_path)!r}, embedder='none',"
        " openai_secret_arn='arn:o', anthropic_secret_arn='arn:a'))\n"
        "assert svc._answers.answerer is not None\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'boto3', 'httpx2') if m in sys.modules))\n"
    )
    # When the service is built
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": LAYER},
    )
    # Then the LLM stages exist, and no SDK (nor boto3, for the secrets) was imported for them
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.parametrize(
    ("env", "gate", "filters"),
    [
        # The gate (and the LLM rerank) at its budget plus half; autoFilters 3 s (no budget for it)
        ({}, 0.45, 3.0),
        ({"NM_BUDGET_LLM_FILTER_MS": "200"}, 0.3, 3.0),
        # NM_GATE_TIMEOUT_S sets both
        ({"NM_GATE_TIMEOUT_S": "1.2"}, 1.2, 1.2),
    ],
)
def test_each_stage_builds_its_provider_with_its_timeout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], gate: float, filters: float
) -> None:
    # Given an LLM configured, and the provider factory recording the timeouts it is asked for
    from neural_memory.providers.llm import factory
    from neural_memory.runtime import build_service

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    asked: list[float] = []

    def build(settings: Settings, timeout_s: float) -> AnthropicProvider:
        asked.append(timeout_s)
        return AnthropicProvider("k", model=settings.anthropic_model, timeout_s=timeout_s)

    monkeypatch.setattr(factory, "build_llm", build)
    # When the service is built
    svc = build_service(Settings(data_dir=tmp_path, embedder="none", anthropic_api_key="a"))
    # Then the gate, autoFilters and answers each got theirs (answers 10 s), and the gate's scorer
    # asks for the design's temperature
    assert asked == [gate, filters, 10.0]
    scorer = svc._pipeline._scorer
    assert scorer is not None and getattr(scorer, "temperature", None) == 0.1
