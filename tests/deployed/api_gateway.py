"""API Gateway in front of one deployed function, as real HTTP on loopback: what a client (the
``mcp`` SDK's streamable HTTP client) sends is decided by the template's authorizer as API Gateway
decides it (``decide``: a refusal is answered with the template's gateway response, in its
envelope), then becomes the REST proxy event API Gateway sends (the authorizer's context in it)
and is served by the function's Lambda container (``invoke``); its proxy reply is the HTTP
response. One invocation at a time, as one warm container serves one."""

from __future__ import annotations

import copy
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from tests.helpers.events import load_event

if TYPE_CHECKING:
    from collections.abc import Callable

# A REST API's largest request payload: API Gateway refuses a bigger one (413) before any function runs.
MAX_PAYLOAD_BYTES = 10 * 1024 * 1024
Decision = tuple[int, dict[str, Any]] | dict[str, Any]


def proxy_event(
    method: str, path: str, headers: dict[str, str], body: str | None, policy: dict[str, Any]
) -> dict[str, Any]:
    """The REST proxy event for a request to ``path`` (a resource with no path parameters) that the
    authorizer allowed with ``policy``."""
    event = copy.deepcopy(load_event("api/observation_get"))
    event.update(
        resource=path,
        path=path,
        httpMethod=method,
        headers=dict(headers),
        multiValueHeaders={name: [value] for name, value in headers.items()},
        queryStringParameters=None,
        multiValueQueryStringParameters=None,
        pathParameters=None,
        body=body,
        isBase64Encoded=False,
    )
    context = event["requestContext"]
    context.update(httpMethod=method, resourcePath=path, path=f"/v1{path}", requestId=str(uuid.uuid4()))
    context["authorizer"] = {**policy["context"], "principalId": policy["principalId"]}
    return event


class ApiGatewayFront(ThreadingHTTPServer):
    """``url`` serves ``path`` through ``decide`` and ``invoke``; ``seen`` holds each request's
    method and the status it got."""

    daemon_threads = True

    def __init__(
        self,
        path: str,
        decide: Callable[[dict[str, str], str, str], Decision],
        invoke: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> None:
        front = self
        self.seen: list[tuple[str, int]] = []
        self._one_at_a_time = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {name: value for name, value in self.headers.items() if name.lower() != "connection"}
                if self.path.split("?", 1)[0] != path:
                    status, reply_headers, body = 403, {"Content-Type": "application/json"}, b'{"message": "no route"}'
                elif length > MAX_PAYLOAD_BYTES:
                    status, reply_headers, body = 413, {"Content-Type": "application/json"}, b'{"message": "too large"}'
                else:
                    status, reply_headers, body = front._answer(self.command, headers, raw)
                front.seen.append((self.command, status))
                self.send_response(status)
                for name, value in reply_headers.items():
                    if name.lower() not in {"content-length", "connection"}:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_POST = do_DELETE = do_PUT = do_HEAD = _serve

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._path, self._decide, self._invoke = path, decide, invoke
        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}{path}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def _answer(self, method: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, str], bytes]:
        json_reply = {"Content-Type": "application/json"}
        decided = self._decide(headers, method, self._path)
        if isinstance(decided, tuple):  # refused by API Gateway: its gateway response
            status, envelope = decided
            return status, json_reply, json.dumps(envelope).encode()
        try:
            body = raw.decode("utf-8") if raw else None
        except UnicodeDecodeError:  # API Gateway hands the function text only (no binary media types)
            return 400, json_reply, b'{"message": "not UTF-8"}'
        with self._one_at_a_time:
            reply = self._invoke(proxy_event(method, self._path, headers, body, decided))
        if "errorType" in reply:  # the function failed: API Gateway's 502
            return 502, json_reply, json.dumps({"message": "Internal server error", **reply}).encode()
        result = reply["result"]
        reply_headers = {name: str(value) for name, value in (result.get("headers") or {}).items()}
        for name, values in (result.get("multiValueHeaders") or {}).items():
            reply_headers[name] = ", ".join(str(value) for value in values)
        return int(result["statusCode"]), reply_headers, str(result.get("body") or "").encode()

    def close(self) -> None:
        self.shutdown()
        self.server_close()
