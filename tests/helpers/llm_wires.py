"""The OpenAI Chat Completions API on a mock transport (the real ``openai`` SDK runs above it), and
LLM providers on fake wires for both APIs, for tests of the provider layer and its fallback."""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

import httpx2
from neural_memory.providers.llm.claude_tool import AnthropicProvider
from neural_memory.providers.llm.openai_tool import OpenAIProvider

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.helpers.pipeline import FakeClaude


def openai_reply(name: str, arguments: Any = None, **message: Any) -> dict[str, Any]:
    """A Chat Completions reply whose message calls function ``name`` with ``arguments`` (a dict is
    sent as JSON, a string as it is); ``message`` overrides the message's fields."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"id": "call_01", "type": "function", "function": {"name": name, "arguments": args}}
    body: dict[str, Any] = {
        "id": "chatcmpl-01", "object": "chat.completion", "created": 1765713600, "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": None, "tool_calls": [call], **message}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 40, "total_tokens": 140},
    }  # fmt: skip
    return body


def openai_error(status: int, kind: str) -> httpx2.Response:
    """An OpenAI API error as the API sends it."""
    return httpx2.Response(status, json={"error": {"message": kind, "type": kind, "param": None, "code": kind}})


def openai_candidates(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The candidates JSON the scorer put in its user message."""
    text = body["messages"][1]["content"]
    found: list[dict[str, Any]] = json.loads(text[text.index("[") :])
    return found


def openai_scores_by_title(
    pattern: str, hit: float = 0.9, miss: float = 0.1
) -> Callable[[dict[str, Any]], httpx2.Response]:
    """Scores candidates whose title matches ``pattern`` high, others low."""

    def respond(body: dict[str, Any]) -> httpx2.Response:
        scores = [
            {"id": c["id"], "score": hit if re.search(pattern, c["title"]) else miss} for c in openai_candidates(body)
        ]
        return httpx2.Response(200, json=openai_reply("record_relevance", {"scores": scores}))

    return respond


class FakeOpenAI:
    """The OpenAI API on a mock transport: records requests (body and path), answers with ``respond``."""

    def __init__(self, respond: Callable[[dict[str, Any]], httpx2.Response], latency_s: float = 0.005) -> None:
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._respond = respond
        self._latency_s = latency_s

    def handle(self, req: httpx2.Request) -> httpx2.Response:
        body = json.loads(req.content)
        self.requests.append(body)
        self.paths.append(req.url.path)
        time.sleep(self._latency_s)
        return self._respond(body)

    def provider(self, timeout_s: float = 1.0, model: str = "gpt-4.1-mini") -> OpenAIProvider:
        client = httpx2.Client(transport=httpx2.MockTransport(self.handle))
        return OpenAIProvider("test-key", model=model, timeout_s=timeout_s, http_client=client)


def claude_provider(claude: FakeClaude, timeout_s: float = 1.0) -> AnthropicProvider:
    """An ``AnthropicProvider`` on ``claude``'s wire."""
    client = httpx2.Client(transport=httpx2.MockTransport(claude.handle))
    return AnthropicProvider("test-key", timeout_s=timeout_s, http_client=client)


def raise_timeout(body: dict[str, Any]) -> httpx2.Response:
    raise httpx2.ReadTimeout("timed out")
