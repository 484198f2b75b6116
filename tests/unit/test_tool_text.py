"""What an agent's model reads of a degraded reply: what fell back in this call, not a provider the
deployment never configured (every call would say that)."""

from __future__ import annotations

from neural_memory.agent_tools.summaries import _degraded


def test_only_a_provider_never_configured_goes_unsaid() -> None:
    assert _degraded(["rerank:balanced->fast (Cohere not configured)"]) == []
    assert _degraded(["rerank:thorough->fast (Cohere not configured; no LLM configured)"]) == []
    # A timeout this call met is news, whatever else was never configured
    compound = "rerank:thorough->fast (Cohere timed out after 2.0 s; no LLM configured)"
    assert _degraded([compound]) == [f"(degraded: {compound})"]
    assert _degraded(["vector:skipped (no embedder configured)", "period:lately->whole history (nobody since x)"]) == [
        "(degraded: vector:skipped (no embedder configured); period:lately->whole history (nobody since x))"
    ]
