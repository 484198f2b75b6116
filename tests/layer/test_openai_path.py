"""The openai SDK's Chat Completions path runs from the layer alone, although the layer leaves out
the SDK's other APIs (``infra.layer_build.OPENAI_UNUSED``): a forced function call answered, a
temperature refused, and every failure the provider turns into ``ToolCallFailed``, in a fresh
interpreter whose import path is only the host layer and the runtime, as in Lambda."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

from infra.layer_build import OPENAI_UNUSED

if TYPE_CHECKING:
    from pathlib import Path

_PROBE = r"""
import json, sys
sys.path[:0] = {paths!r}
import httpx2
from neural_memory.providers.llm.base import ToolCallFailed
from neural_memory.providers.llm.openai_tool import OpenAIProvider

SCHEMA = {{"type": "object", "properties": {{"x": {{"type": "string"}}}}}}
TOOL = {{"name": "f", "description": "d", "input_schema": SCHEMA}}

def completion(message):
    return {{"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{{"index": 0, "finish_reason": "tool_calls", "message": {{"role": "assistant", **message}}}}]}}

def call(arguments):
    return completion({{"content": None, "tool_calls": [
        {{"id": "1", "type": "function", "function": {{"name": "f", "arguments": arguments}}}}]}})

def error(status, message):
    return httpx2.Response(status, json={{"error": {{"message": message, "type": "t", "param": None, "code": "c"}}}})

def respond(case, body):
    if case == "refused" and "temperature" in body:
        return error(400, "Unsupported value: 'temperature' does not support 0.1 with this model.")
    if case in ("ok", "refused"):
        return httpx2.Response(200, json=call('{{"x": "y"}}'))
    if case.isdigit():
        return error(int(case), "no")
    if case == "timeout":
        raise httpx2.ReadTimeout("timed out")
    if case == "refused connection":
        raise httpx2.ConnectError("refused")
    if case == "not json":
        return httpx2.Response(200, text="<html>oops</html>")
    if case == "no call":
        return httpx2.Response(200, json=completion({{"content": "hm"}}))
    return httpx2.Response(200, json=call('{{"x": '))

out = {{}}
for case in {cases!r}:
    sent = []
    def handle(request, case=case, sent=sent):
        body = json.loads(request.content)
        sent.append("temperature" in body)
        return respond(case, body)
    client = httpx2.Client(transport=httpx2.MockTransport(handle))
    provider = OpenAIProvider("k", model="m-" + case, timeout_s=1.0, http_client=client)
    try:
        got = provider.forced_tool_input(system="s", tool=TOOL, prompt="p", max_tokens=10, temperature=0.1)
        out[case] = ["ok", got, sent]
    except ToolCallFailed as exc:
        out[case] = [exc.reason, exc.detail, sent]
loaded = sorted(m for m in sys.modules if m.startswith("openai."))
print(json.dumps({{"out": out, "loaded": loaded}}))
"""

EXPECTED = {
    "ok": ["ok", {"x": "y"}, [True]],
    "refused": ["ok", {"x": "y"}, [True, False]],
    "400": ["error", "LLM call failed: 400 BadRequestError", [True]],
    "401": ["error", "LLM call failed: 401 AuthenticationError", [True]],
    "429": ["error", "LLM call failed: 429 RateLimitError", [True]],
    "500": ["error", "LLM call failed: 500 InternalServerError", [True]],
    "503": ["error", "LLM call failed: 503 InternalServerError", [True]],
    "timeout": ["timeout", "LLM call exceeded its time budget", [True]],
    "refused connection": ["error", "LLM call failed: APIConnectionError", [True]],
    "not json": ["error", "reply has no tool call", [True]],
    "no call": ["error", "reply has no tool call", [True]],
    "arguments not json": ["error", "tool arguments are not JSON", [True]],
}


def test_the_chat_completions_path_runs_from_the_layer_without_the_sdks_other_apis(
    host_layer: Path, lambda_layer: Path, runtime: Path
) -> None:
    # Given both layers, without the SDK's other APIs
    for layer in (host_layer, lambda_layer):
        sdk = layer / "python" / "openai"
        assert (sdk / "resources" / "chat").is_dir()
        assert not [unused for unused in OPENAI_UNUSED if (sdk / unused).exists()]
    # When the OpenAI provider is asked for a forced function call, answered every way
    code = _PROBE.format(paths=[str(host_layer / "python"), str(runtime)], cases=list(EXPECTED))
    env = {"PATH": os.environ.get("PATH", ""), "AWS_REGION": "us-east-1"}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=False, env=env, cwd=host_layer
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    # Then each came back as the provider reports it (no ImportError on any path), and nothing the
    # layer left out was asked for
    assert result["out"] == EXPECTED
    assert "openai.resources.chat.completions" in result["loaded"]
    left_out = {"openai." + unused.replace("/", ".") for unused in OPENAI_UNUSED}
    assert not [m for m in result["loaded"] if any(m == u or m.startswith(u + ".") for u in left_out)]
