"""What API Gateway does in AWS, done in-process: match the route, enforce the body limit,
authorize the API key (as the Lambda authorizer will), build a REST proxy event and call the
function's own ``lambda_handler``."""

from __future__ import annotations

import importlib
import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from neural_memory.clock import utcnow
from neural_memory.errors import Unauthorized
from neural_memory.http import error_body
from neural_memory.keys import authenticate, extract_api_key

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from neural_memory.keys import KeyStore

STAGE = "local"


@dataclass(frozen=True)
class Route:
    """One API route and the function module that serves it."""

    method: str
    template: str
    module: str

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.template) + "$")


ROUTES = (
    Route("POST", "/v1/search", "functions.search.app"),
    Route("POST", "/v1/answer", "functions.answer.app"),
    Route("POST", "/v1/observations", "functions.observations.app"),
    Route("GET", "/v1/observations/{id}", "functions.observations.app"),
    Route("DELETE", "/v1/observations/{id}", "functions.observations.app"),
)


@dataclass
class ProxyResponse:
    """An HTTP reply."""

    status: int
    body: str
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})


@dataclass
class LocalLambdaContext:
    """The attributes of the Lambda context object that Powertools reads."""

    function_name: str
    aws_request_id: str
    memory_limit_in_mb: int = 1024
    function_version: str = "$LATEST"
    invoked_function_arn: str = ""
    log_group_name: str = "local"
    log_stream_name: str = "local"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def openapi_document() -> dict[str, Any]:
    """The merged OpenAPI document of every function's resolver."""
    from aws_lambda_powertools.event_handler.openapi.merge import OpenAPIMerge  # noqa: PLC0415
    from aws_lambda_powertools.event_handler.openapi.models import (  # noqa: PLC0415
        APIKey,
        APIKeyIn,
        HTTPBearer,
    )

    merge = OpenAPIMerge(
        title="Neural Memory API",
        version="0.1.0",
        description="Semantic memory for engineering teams and their agents.",
        security_schemes={"bearer": HTTPBearer(), "apiKey": APIKey(name="x-api-key", **{"in": APIKeyIn.header})},
        security=[{"bearer": []}, {"apiKey": []}],
        on_conflict="error",
    )
    for module in dict.fromkeys(route.module for route in ROUTES):
        merge.add_schema(importlib.import_module(module).app.get_openapi_schema())
    document: dict[str, Any] = json.loads(merge.get_openapi_json_schema())
    return document


class LocalGateway:
    """Turns HTTP requests into API Gateway REST proxy events for the functions' handlers.

    Handlers run one at a time, as in one Lambda container: the Powertools resolver keeps the
    current event on a module-level object.
    """

    def __init__(self, keys: KeyStore, max_body_bytes: int) -> None:
        self._keys = keys
        self._max_body_bytes = max_body_bytes
        self._lock = threading.Lock()
        self._openapi: dict[str, Any] | None = None

    def dispatch(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes, source_ip: str = "127.0.0.1"
    ) -> ProxyResponse:
        """Serve one request (``target`` is the request line's path with query string)."""
        request_id = str(uuid.uuid4())
        url = urlsplit(target)
        path = unquote(url.path)
        if method == "GET" and path in {"/", "/health"}:
            return ProxyResponse(
                200, json.dumps({"status": "ok", "service": "neural-memory", "openapi": "/openapi.json"})
            )
        if method == "GET" and path == "/openapi.json":
            if self._openapi is None:
                self._openapi = openapi_document()
            return ProxyResponse(200, json.dumps(self._openapi))
        matches = [(r, m) for r in ROUTES if (m := r.pattern.match(path))]
        route, match = next(((r, m) for r, m in matches if r.method == method), (None, None))
        if route is None or match is None:
            if matches:
                return _error(
                    HTTPStatus.METHOD_NOT_ALLOWED,
                    "method_not_allowed",
                    f"{method} is not allowed on {path}",
                    request_id,
                )
            return _error(HTTPStatus.NOT_FOUND, "not_found", f"no route for {method} {path}", request_id)
        if len(body) > self._max_body_bytes:
            return _error(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                "payload_too_large",
                f"body is over {self._max_body_bytes} bytes",
                request_id,
            )
        try:
            workspace_id = authenticate(self._keys, extract_api_key(headers))
        except Unauthorized as exc:
            return _error(HTTPStatus.UNAUTHORIZED, exc.code, str(exc), request_id)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return _error(HTTPStatus.BAD_REQUEST, "validation_error", "body: not valid UTF-8", request_id)
        event = _proxy_event(route, match.groupdict(), method, path, url.query, headers, text, request_id, source_ip)
        event["requestContext"]["authorizer"] = {"workspaceId": workspace_id, "principalId": workspace_id}
        handler: Callable[[dict[str, Any], Any], dict[str, Any]] = importlib.import_module(route.module).lambda_handler
        context = LocalLambdaContext(function_name=route.module.split(".")[1], aws_request_id=request_id)
        with self._lock:
            reply = handler(event, context)
        reply_headers = {k: str(v) for k, v in (reply.get("headers") or {}).items()}
        for name, values in (reply.get("multiValueHeaders") or {}).items():
            reply_headers[name] = ", ".join(str(v) for v in values)
        return ProxyResponse(int(reply["statusCode"]), str(reply.get("body") or ""), reply_headers)


def _error(status: HTTPStatus, code: str, message: str, request_id: str) -> ProxyResponse:
    return ProxyResponse(int(status), error_body(code, message, request_id))


def _proxy_event(
    route: Route,
    path_parameters: dict[str, str],
    method: str,
    path: str,
    query: str,
    headers: Mapping[str, str],
    body: str,
    request_id: str,
    source_ip: str,
) -> dict[str, Any]:
    multi_query = parse_qs(query, keep_blank_values=True)
    now = utcnow()
    return {
        "resource": route.template,
        "path": path,
        "httpMethod": method,
        "headers": dict(headers),
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in multi_query.items()} or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": path_parameters or None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": route.template,
            "httpMethod": method,
            "path": f"/{STAGE}{path}",
            "stage": STAGE,
            "requestId": request_id,
            "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "requestTimeEpoch": int(now.timestamp() * 1000),
            "identity": {"sourceIp": source_ip, "userAgent": headers.get("User-Agent", "")},
            "accountId": "000000000000",
            "apiId": "local",
            "protocol": "HTTP/1.1",
        },
        "body": body or None,
        "isBase64Encoded": False,
    }
