"""A stand-in of Anthropic's Messages API on a loopback port, for driving the real Claude Code CLI
(``ANTHROPIC_BASE_URL``) with no key and no network.

It answers ``POST /v1/messages`` as the API does: with ``"stream": true`` (what the CLI sends), as
Server-Sent Events (``message_start``; per content block ``content_block_start``, its deltas
(``text_delta``, or ``input_json_delta`` for a tool's input) and ``content_block_stop``;
``message_delta`` with the stop reason; ``message_stop``); otherwise as one JSON message. What it
says is decided by a script, a function of the request's body, so a test can ask for a tool call
and read what the CLI sent back. Every request is recorded (``requests``), so assertions are on
what the model was actually given.
"""

from __future__ import annotations

import json
import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


@dataclass(frozen=True)
class Text:
    """A text block of the model's reply."""

    text: str


@dataclass(frozen=True)
class ToolUse:
    """A tool call in the model's reply (the turn then stops with ``tool_use``)."""

    name: str
    input: dict[str, Any]
    id: str = field(default_factory=lambda: f"toolu_{uuid.uuid4().hex[:24]}")


Block = Text | ToolUse


@dataclass
class Recorded:
    """One request the stand-in received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw: bytes


def user_texts(body: dict[str, Any]) -> list[str]:
    """Every text the request's user messages carry: plain strings, text blocks and tool results'
    text (what the model reads from the user's side of the conversation)."""
    found: list[str] = []
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            found.append(content)
            continue
        for block in content or []:
            if block.get("type") == "text":
                found.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, str):
                    found.append(inner)
                else:
                    found.extend(part.get("text", "") for part in inner or [] if part.get("type") == "text")
    return found


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of the request's user messages, in order."""
    return [
        block
        for message in body.get("messages", [])
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def tool_names(body: dict[str, Any]) -> list[str]:
    """The names of the tools the request offers the model."""
    return [str(tool.get("name")) for tool in body.get("tools", [])]


class AnthropicStandIn:
    """The Messages API on an ephemeral loopback port; ``script`` writes each reply."""

    def __init__(self, script: Callable[[dict[str, Any]], list[Block]]) -> None:
        self.script = script
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet: the test reads `requests`
                return

            def _record(self, body: bytes) -> Recorded:
                try:
                    parsed = json.loads(body) if body else None
                except ValueError:
                    parsed = None
                recorded = Recorded(self.command, self.path, dict(self.headers.items()), parsed, body)
                with stand_in._lock:
                    stand_in.requests.append(recorded)
                return recorded

            def do_HEAD(self) -> None:
                self._record(b"")
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._record(b"")
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                recorded = self._record(self.rfile.read(length))
                body = recorded.body
                if not self.path.startswith("/v1/messages") or body is None:
                    self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
                    return
                if self.path.startswith("/v1/messages/count_tokens"):
                    self._json(200, {"input_tokens": len(recorded.raw) // 4})
                    return
                blocks = stand_in.script(body)
                model = str(body.get("model", "claude-sonnet-4-5"))
                if body.get("stream"):
                    self._stream(model, blocks)
                else:
                    self._json(200, _message(model, blocks))

            def _json(self, status: int, document: dict[str, Any]) -> None:
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, model: str, blocks: list[Block]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event, data in _events(model, blocks):
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def messages(self) -> list[dict[str, Any]]:
        """The bodies of the Messages requests received so far, in order."""
        with self._lock:
            return [r.body for r in self.requests if r.method == "POST" and r.body is not None]

    def raw_bytes(self) -> bytes:
        """Every request's body, as received."""
        with self._lock:
            return b"\n".join(r.raw for r in self.requests)


def _stop_reason(blocks: list[Block]) -> str:
    return "tool_use" if any(isinstance(b, ToolUse) for b in blocks) else "end_turn"


def _usage() -> dict[str, int]:
    return {"input_tokens": 10, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def _message(model: str, blocks: list[Block]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [
        {"type": "text", "text": b.text}
        if isinstance(b, Text)
        else {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
        for b in blocks
    ]
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _stop_reason(blocks),
        "stop_sequence": None,
        "usage": _usage(),
    }


def _events(model: str, blocks: list[Block]) -> Iterator[tuple[str, dict[str, Any]]]:
    start = _message(model, []) | {"stop_reason": None}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(blocks):
        if isinstance(block, Text):
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            delta: dict[str, Any] = {"type": "text_delta", "text": block.text}
        else:
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": block.id, "name": block.name, "input": {}},
                },
            )
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.input)}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": _stop_reason(blocks), "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
    )
    yield "message_stop", {"type": "message_stop"}


@contextmanager
def anthropic_stand_in(script: Callable[[dict[str, Any]], list[Block]]) -> Iterator[AnthropicStandIn]:
    """The stand-in, serving until the block ends."""
    stand_in = AnthropicStandIn(script)
    thread = threading.Thread(target=stand_in.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield stand_in
    finally:
        stand_in.httpd.shutdown()
        stand_in.httpd.server_close()
