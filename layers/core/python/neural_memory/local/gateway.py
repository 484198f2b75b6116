"""What API Gateway does in AWS, done in-process: match the route (from the one route table,
``neural_memory.routes``), call the authorizer Lambda's own handler with
the REQUEST-authorizer event API Gateway sends, build a REST proxy event with the authorizer's
context and call the route function's own ``lambda_handler``."""

from __future__ import annotations

import fnmatch
import importlib
import json
import threading
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from neural_memory.clock import utcnow
from neural_memory.errors import InvalidInput, MethodNotAllowed, NeuralMemoryError, NotFound, Unauthorized
from neural_memory.http import error_reply
from neural_memory.keys import set_key_store
from neural_memory.observability import logger
from neural_memory.routes import ROUTES

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from neural_memory.keys import KeyStore
    from neural_memory.routes import Route

STAGE = "local"
ACCOUNT = "000000000000"
API_ID = "local"
AUTHORIZER_MODULE = "functions.authorizer.app"


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
    from aws_lambda_powertools.event_handler.openapi.merge import OpenAPIMerge
    from aws_lambda_powertools.event_handler.openapi.models import (
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
    return _without_unused_validation_response(document)


def _without_unused_validation_response(document: dict[str, Any]) -> dict[str, Any]:
    """Powertools documents a 422 on every route; this API answers invalid input with 400 (the
    envelope), never 422, so the 422 and the schemas only it used are dropped."""
    for operations in document["paths"].values():
        for operation in operations.values():
            operation["responses"].pop("422", None)
    schemas = document["components"]["schemas"]
    while True:
        text = json.dumps({key: value for key, value in document.items() if key != "components"})
        text += json.dumps(schemas)
        unused = [name for name in schemas if f'"#/components/schemas/{name}"' not in text]
        if not unused:
            return document
        for name in unused:
            del schemas[name]


class LocalGateway:
    """Turns HTTP requests into API Gateway REST proxy events for the functions' handlers.

    Each function's handler runs one request at a time, as one Lambda container does (the
    Powertools resolver keeps the current event on a module-level object), but functions never
    wait on each other: a search is not held up by an ingest embedding its batch. ``keys`` becomes
    the key store of the authorizer handler in this process.
    """

    def __init__(self, keys: KeyStore) -> None:
        set_key_store(keys)
        self._locks = {name: threading.Lock() for name in {route.function for route in ROUTES} | {"authorizer"}}
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
                return _error(MethodNotAllowed(f"{method} is not allowed on {path}"), request_id)
            return _error(NotFound(f"no route for {method} {path}"), request_id)
        event = _proxy_event(route, match.groupdict(), method, path, url.query, headers, "", request_id, source_ip)
        if route.authorization == "api_key":
            try:
                with self._locks["authorizer"]:
                    authorizer = self._authorize(event, request_id)
            except NeuralMemoryError as exc:
                return _error(exc, request_id)
            if authorizer is None:
                return _error(Unauthorized("missing or invalid API key"), request_id)
            event["requestContext"]["authorizer"] = authorizer
        try:
            event["body"] = body.decode("utf-8") or None
        except UnicodeDecodeError:
            return _error(InvalidInput("body", "not valid UTF-8"), request_id)
        with self._locks[route.function]:
            reply = self._invoke(route.module, event, route.function, request_id)
        reply_headers = {k: str(v) for k, v in (reply.get("headers") or {}).items()}
        for name, values in (reply.get("multiValueHeaders") or {}).items():
            reply_headers[name] = ", ".join(str(v) for v in values)
        return ProxyResponse(int(reply["statusCode"]), str(reply.get("body") or ""), reply_headers)

    def _authorize(self, proxy: dict[str, Any], request_id: str) -> dict[str, Any] | None:
        """Call the authorizer function as API Gateway does; its context (with ``principalId``) on
        Allow for this method, None when it refuses (``Unauthorized``) or denies."""
        event = authorizer_event(proxy)
        try:
            policy = self._invoke(AUTHORIZER_MODULE, event, "authorizer", request_id)
        except Exception as exc:  # "Unauthorized" is a refusal (401); anything else a failure (500), as in AWS
            if str(exc) == "Unauthorized":
                return None
            logger.exception("the authorizer failed")
            raise NeuralMemoryError("the authorizer failed; see the server log") from exc
        statements = policy.get("policyDocument", {}).get("Statement", [])
        allowed = any(
            s.get("Effect") == "Allow"
            and any(fnmatch.fnmatchcase(event["methodArn"], r) for r in _list(s.get("Resource")))
            for s in statements
        )
        if not allowed:
            return None
        return {**(policy.get("context") or {}), "principalId": policy.get("principalId")}

    @staticmethod
    def _invoke(module: str, event: dict[str, Any], function: str, request_id: str) -> dict[str, Any]:
        handler: Callable[[dict[str, Any], Any], dict[str, Any]] = importlib.import_module(module).lambda_handler
        return handler(event, LocalLambdaContext(function_name=function, aws_request_id=request_id))


def _list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def authorizer_event(proxy: Mapping[str, Any]) -> dict[str, Any]:
    """The REQUEST-authorizer event API Gateway sends for a REST proxy request."""
    context = proxy["requestContext"]
    method_arn = (
        f"arn:aws:execute-api:{STAGE}:{ACCOUNT}:{API_ID}/{STAGE}/{proxy['httpMethod']}{context['resourcePath']}"
    )
    return {
        "type": "REQUEST",
        "methodArn": method_arn,
        "resource": proxy["resource"],
        "path": proxy["path"],
        "httpMethod": proxy["httpMethod"],
        "headers": proxy["headers"],
        "multiValueHeaders": proxy["multiValueHeaders"],
        "queryStringParameters": proxy["queryStringParameters"] or {},
        "multiValueQueryStringParameters": proxy["multiValueQueryStringParameters"] or {},
        "pathParameters": proxy["pathParameters"] or {},
        "stageVariables": {},
        "requestContext": {key: value for key, value in context.items() if key != "authorizer"},
    }


def _error(exc: NeuralMemoryError, request_id: str) -> ProxyResponse:
    status, headers, body = error_reply(exc, request_id)
    return ProxyResponse(status, body, headers)


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
        "resource": route.path,
        "path": path,
        "httpMethod": method,
        "headers": dict(headers),
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in multi_query.items()} or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": path_parameters or None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": route.path,
            "httpMethod": method,
            "path": f"/{STAGE}{path}",
            "stage": STAGE,
            "requestId": request_id,
            "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "requestTimeEpoch": int(now.timestamp() * 1000),
            "identity": {"sourceIp": source_ip, "userAgent": headers.get("User-Agent", "")},
            "accountId": ACCOUNT,
            "apiId": API_ID,
            "protocol": "HTTP/1.1",
        },
        "body": body or None,
        "isBase64Encoded": False,
    }
