"""What API Gateway does in AWS, done in-process: match the route (from the one route table,
``neural_memory.api.routes``), call the authorizer Lambda's own handler with
the REQUEST-authorizer event API Gateway sends, build a REST proxy event with the authorizer's
context and call the route function's own ``lambda_handler``.

The handler modules are the very files Lambda runs, ``functions/<name>/app.py`` of this checkout
(or of ``$NM_FUNCTIONS_DIR``), loaded by file path: nothing installs a package named ``functions``."""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import os
import queue
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from neural_memory.api.resolver import error_reply, header
from neural_memory.api.routes import ROUTES
from neural_memory.auth.keys import API_KEY_HEADER, INVALID_KEY, NO_KEY
from neural_memory.auth.process_keys import set_key_store
from neural_memory.clock import utcnow
from neural_memory.errors import InvalidInput, MethodNotAllowed, NeuralMemoryError, NotFound, Unauthorized
from neural_memory.observability import logger

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import ModuleType

    from neural_memory.api.routes import Route
    from neural_memory.auth.base import KeyStore

STAGE = "local"
ACCOUNT = "000000000000"
API_ID = "local"
AUTHORIZER = "authorizer"
FUNCTIONS_DIR_VARIABLE = "NM_FUNCTIONS_DIR"


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
    from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer

    merge = OpenAPIMerge(
        title="Neural Memory API",
        version="0.1.0",
        description="Semantic memory for engineering teams and their agents.",
        security_schemes={"bearer": HTTPBearer()},
        security=[{"bearer": []}],
        on_conflict="error",
    )
    for function in dict.fromkeys(route.function for route in ROUTES):
        merge.add_schema(load_handler(function).app.get_openapi_schema())
    document: dict[str, Any] = json.loads(merge.get_openapi_json_schema())
    for route in ROUTES:  # the webhook receivers take no API key: the provider's signature instead
        if route.authorization != "api_key":
            document["paths"][route.path][route.method.lower()]["security"] = []
    return _without_unused_validation_response(document)


def _without_unused_validation_response(document: dict[str, Any]) -> dict[str, Any]:
    """Powertools documents a 422 for request validation on every route; this API answers invalid
    input with 400 (the envelope), so that 422 and the schemas only it used are dropped (a route's
    own 422, in the envelope, stays)."""
    for operations in document["paths"].values():
        for operation in operations.values():
            if "HTTPValidationError" in json.dumps(operation["responses"].get("422", {})):
                del operation["responses"]["422"]
    schemas = document["components"]["schemas"]
    while True:
        text = json.dumps({key: value for key, value in document.items() if key != "components"})
        text += json.dumps(schemas)
        unused = [name for name in schemas if f'"#/components/schemas/{name}"' not in text]
        if not unused:
            return document
        for name in unused:
            del schemas[name]


def functions_dir() -> Path:
    """The folder of the functions' handlers: ``$NM_FUNCTIONS_DIR``, else ``functions/`` of the
    checkout this package is in (``layers/core/python/neural_memory/local/serving`` -> the repository)."""
    configured = os.environ.get(FUNCTIONS_DIR_VARIABLE)
    folder = Path(configured) if configured else Path(__file__).resolve().parents[6] / "functions"
    if not (folder / AUTHORIZER / "app.py").is_file():
        raise ModuleNotFoundError(
            f"no function handlers in {folder}: run from a checkout of the repository, or set {FUNCTIONS_DIR_VARIABLE}"
        )
    return folder


def load_handler(function: str, instance: int = 0) -> ModuleType:
    """``functions/<function>/app.py`` as a module. Instance 0 is ``functions.<function>.app``, the
    same module object an ``import functions.<function>.app`` gives where the repository is on the
    path (tests patch it); others are fresh executions of the same file."""
    name = f"functions.{function}.app" + (f"__instance{instance}" if instance else "")
    if instance == 0 and name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, functions_dir() / function / "app.py")
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic and Powertools resolve annotations through it
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


class FunctionPool:
    """Up to ``size`` instances of one function's handler module, as Lambda runs up to that many
    execution environments of a function at once: each instance serves one request at a time (a
    Powertools resolver is not meant to serve two at once; the event each thread reads is its own,
    see ``NeuralMemoryResolver``), and instances are made on demand. The first is the module
    itself; the others are fresh executions of its file.
    All of them share the process's service, so one store and one model serve every instance."""

    def __init__(self, function: str, size: int) -> None:
        self.function = function
        self.size = size
        self._free = threading.Semaphore(size)
        self._idle: queue.LifoQueue[ModuleType] = queue.LifoQueue()
        self._made = 0
        self._making = threading.Lock()

    def invoke(self, event: dict[str, Any], context: LocalLambdaContext) -> dict[str, Any]:
        """Run the handler on a free instance (waiting for one when all ``size`` are busy)."""
        with self._free:
            try:
                instance = self._idle.get_nowait()
            except queue.Empty:
                instance = self._new_instance()
            try:
                reply: dict[str, Any] = instance.lambda_handler(event, context)
                return reply
            finally:
                self._idle.put(instance)

    def _new_instance(self) -> ModuleType:
        with self._making:
            number = self._made
            self._made += 1
        return load_handler(self.function, number)


DEFAULT_CONCURRENCY = 8


class LocalGateway:
    """Turns HTTP requests into API Gateway REST proxy events for the functions' handlers.

    Each function runs up to ``concurrency`` requests at once on its own ``FunctionPool`` (like
    Lambda's concurrent execution environments), so functions never wait on each other and
    searches run in parallel. ``keys`` becomes the key store of the authorizer handler.
    """

    def __init__(self, keys: KeyStore, concurrency: int = DEFAULT_CONCURRENCY) -> None:
        set_key_store(keys)
        functions = [*dict.fromkeys(route.function for route in ROUTES), AUTHORIZER]
        self._pools = {function: FunctionPool(function, concurrency) for function in functions}
        self._openapi: dict[str, Any] | None = None
        # What the server adds to GET /health (its connections: open, limit, dropped by reason).
        self.health_details: Callable[[], dict[str, Any]] | None = None

    def dispatch(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes, source_ip: str = "127.0.0.1"
    ) -> ProxyResponse:
        """Serve one request (``target`` is the request line's path with query string)."""
        request_id = str(uuid.uuid4())
        url = urlsplit(target)
        path = unquote(url.path)
        if method == "GET" and path == "/" and prefers_html(header(headers, "Accept") or ""):
            # A browser opening the printed URL gets the console; API clients keep the JSON health.
            return ProxyResponse(302, "", {"Location": "/console", "Content-Type": "text/plain"})
        if method == "GET" and path in {"/", "/health"}:
            details = self.health_details() if self.health_details is not None else {}
            health = {"status": "ok", "service": "neural-memory", "openapi": "/openapi.json", **details}
            return ProxyResponse(200, json.dumps(health))
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
                authorizer = self._authorize(event, request_id)
            except NeuralMemoryError as exc:
                return _error(exc, request_id)
            event["requestContext"]["authorizer"] = authorizer
        try:
            event["body"] = body.decode("utf-8") or None
        except UnicodeDecodeError:
            return _error(InvalidInput("body", "not valid UTF-8"), request_id)
        reply = self._invoke(route.function, event, request_id)
        reply_headers = {k: str(v) for k, v in (reply.get("headers") or {}).items()}
        for name, values in (reply.get("multiValueHeaders") or {}).items():
            reply_headers[name] = ", ".join(str(v) for v in values)
        return ProxyResponse(int(reply["statusCode"]), str(reply.get("body") or ""), reply_headers)

    def _authorize(self, proxy: dict[str, Any], request_id: str) -> dict[str, Any]:
        """Call the authorizer function as API Gateway does: its context (with ``principalId``) on
        Allow for this method; ``Unauthorized`` worded as the stack's gateway responses word it on
        AWS: a request without the header is refused without calling the function (the header is
        the authorizer's identity source), a Deny says the message in its context."""
        if not (header(proxy["headers"], API_KEY_HEADER) or "").strip():
            raise Unauthorized(NO_KEY)
        event = authorizer_event(proxy)
        try:
            policy = self._invoke("authorizer", event, request_id)
        except Exception as exc:  # "Unauthorized" is a refusal (401); anything else a failure (500), as in AWS
            if str(exc) == "Unauthorized":
                raise Unauthorized(NO_KEY) from None  # API Gateway's UNAUTHORIZED response
            logger.exception("the authorizer failed")
            raise NeuralMemoryError("the authorizer failed; see the server log") from exc
        statements = policy.get("policyDocument", {}).get("Statement", [])
        allowed = any(
            s.get("Effect") == "Allow"
            and any(fnmatch.fnmatchcase(event["methodArn"], r) for r in _list(s.get("Resource")))
            for s in statements
        )
        if not allowed:  # API Gateway's ACCESS_DENIED response, a 401 reading the Deny's message
            raise Unauthorized(str((policy.get("context") or {}).get("message") or INVALID_KEY))
        return {**(policy.get("context") or {}), "principalId": policy.get("principalId")}

    def _invoke(self, function: str, event: dict[str, Any], request_id: str) -> dict[str, Any]:
        context = LocalLambdaContext(function_name=function, aws_request_id=request_id)
        return self._pools[function].invoke(event, context)


def prefers_html(accept: str) -> bool:
    """Whether an ``Accept`` header ranks HTML above JSON, as a browser's does
    (``text/html,...,*/*;q=0.8``) and ``curl``'s ``*/*`` does not."""
    weights: dict[str, float] = {}
    for part in accept.split(","):
        media, *parameters = (piece.strip() for piece in part.split(";"))
        q = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        weights[media.lower()] = q

    def weight(media: str) -> float:
        kind = media.split("/", maxsplit=1)[0]
        return weights.get(media, weights.get(f"{kind}/*", weights.get("*/*", 0.0)))

    return "text/html" in weights and weight("text/html") > weight("application/json")


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
