"""The HTTP edge shared by every API function: one resolver factory that validates requests
against the pydantic models, turns every error into the envelope of ``docs/api.md`` in one
place (``error_reply``, also used by the local gateway and server), and reads the workspace that
the authorizer put in the request context."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from pydantic import ValidationError

from neural_memory import json_input
from neural_memory.auth.roles import LEGACY_ROLE, Caller, check_role
from neural_memory.bad_input import validation_failure
from neural_memory.errors import (
    ConfigurationError,
    InvalidInput,
    NeuralMemoryError,
    NotFound,
    PayloadTooLarge,
    Unauthorized,
    UnsupportedMediaType,
)
from neural_memory.models import ErrorBody, ErrorDetail, ErrorResponse
from neural_memory.observability import logger

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from aws_lambda_powertools.event_handler.api_gateway import ResponseBuilder, Route
    from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
    from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent
    from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
    from aws_lambda_powertools.utilities.typing import LambdaContext

# Documented on every route, so the OpenAPI document matches what the handlers really return.
ERROR_RESPONSES: dict[int, OpenAPIResponse] = {
    status: {
        "description": description,
        "content": {"application/json": {"model": ErrorResponse}},
    }
    for status, description in (
        (400, "Invalid input; the message and details name the field"),
        (401, "Missing, unknown or revoked API key"),
        (403, "The key's role does not allow this call; the message names the role needed"),
        (413, "Body over the size limit"),
        (415, "Body is not JSON"),
        (500, "A bug; the request id finds it in the logs"),
        (503, "A required backend is unavailable, or the service is misconfigured; retry after Retry-After seconds"),
    )
}


def current_request_id(app: APIGatewayRestResolver) -> str:
    """API Gateway's request id (the local server sets one too)."""
    context = app.current_event.raw_event.get("requestContext") or {}
    return str(context.get("requestId") or "unknown")


def current_workspace_id(app: APIGatewayRestResolver) -> str:
    """The workspace the authorizer resolved from the API key; never taken from the request body."""
    context = app.current_event.raw_event.get("requestContext") or {}
    authorizer = context.get("authorizer") or {}
    workspace = authorizer.get("workspaceId") if isinstance(authorizer, dict) else None
    if not isinstance(workspace, str) or not workspace:
        raise Unauthorized("missing or invalid API key")
    return workspace


def current_actor(app: APIGatewayRestResolver) -> str:
    """Who makes the request: ``key:<key id>`` of the API key the authorizer checked
    (``key:unknown`` for a decision API Gateway cached before authorizers named the key)."""
    context = app.current_event.raw_event.get("requestContext") or {}
    authorizer = context.get("authorizer") or {}
    key_id = authorizer.get("keyId") if isinstance(authorizer, dict) else None
    return f"key:{key_id}" if isinstance(key_id, str) and key_id else "key:unknown"


def current_caller(app: APIGatewayRestResolver) -> Caller:
    """Who calls: the key's name and role, as the authorizer put them in the request context. A
    decision API Gateway cached before authorizers named them is the key's workspace and ``write``
    (every key was then), as a key without them in the key store is."""
    context = app.current_event.raw_event.get("requestContext") or {}
    authorizer = context.get("authorizer") or {}
    authorizer = authorizer if isinstance(authorizer, dict) else {}
    name, role = authorizer.get("keyName"), authorizer.get("role")
    try:
        checked = check_role(role) if isinstance(role, str) and role else LEGACY_ROLE
    except ValueError:
        raise Unauthorized("missing or invalid API key") from None
    return Caller(name=name if isinstance(name, str) and name else current_workspace_id(app), role=checked)


def error_body(code: str, message: str, request_id: str, details: list[ErrorDetail] | None = None) -> str:
    """The error envelope as JSON."""
    body = ErrorResponse(error=ErrorBody(code=code, message=message, details=details or []), request_id=request_id)
    return body.model_dump_json(by_alias=True)


def error_reply(
    exc: NeuralMemoryError, request_id: str, details: list[ErrorDetail] | None = None
) -> tuple[int, dict[str, str], str]:
    """Status, headers and envelope of a domain error: the one mapping from errors to HTTP."""
    if details is None and isinstance(exc, InvalidInput):
        details = [ErrorDetail(field=exc.field, message=exc.message, type="value_error")]
    headers = {"Content-Type": content_types.APPLICATION_JSON, **exc.headers()}
    return int(exc.status), headers, error_body(exc.code, str(exc), request_id, details)


def _error_response(
    app: APIGatewayRestResolver, exc: NeuralMemoryError, details: list[ErrorDetail] | None = None
) -> Response[str]:
    status, headers, body = error_reply(exc, current_request_id(app), details)
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body, headers=headers)


_FORM = "application/x-www-form-urlencoded"


def _reads_as_json(value: object) -> bool:
    """Media types are case-insensitive (``APPLICATION/JSON``); ``curl -d`` without ``-H`` labels
    JSON as form-encoded."""
    media = str(value).split(";", 1)[0].strip().lower()
    return media in {"application/json", _FORM} and str(value) != "application/json"


def header(headers: Mapping[str, str], name: str) -> str | None:
    """A request header by case-insensitive name (API Gateway passes them as the client sent them)."""
    wanted = name.lower()
    return next((value for key, value in headers.items() if key.lower() == wanted), None)


def _json_by_default(event: Mapping[str, Any]) -> Mapping[str, Any]:
    """Every body of this API is JSON: a JSON media type in any letter case, or ``curl``'s default
    form label, is read as ``application/json`` (any other type still gets 415)."""
    headers = event.get("headers") or {}
    if not any(name.lower() == "content-type" and _reads_as_json(value) for name, value in headers.items()):
        return event
    fixed = {name: value for name, value in headers.items() if name.lower() != "content-type"}
    multi = {
        name: value for name, value in (event.get("multiValueHeaders") or {}).items() if name.lower() != "content-type"
    }
    return {
        **event,
        "headers": {**fixed, "Content-Type": "application/json"},
        "multiValueHeaders": {**multi, "Content-Type": ["application/json"]},
    }


def _proxy_error(event: Mapping[str, Any], exc: NeuralMemoryError) -> dict[str, Any]:
    """A REST proxy reply for an error raised before the resolver runs."""
    context = event.get("requestContext") or {}
    status, headers, body = error_reply(exc, str(context.get("requestId") or "unknown"))
    return {"statusCode": status, "headers": headers, "body": body, "isBase64Encoded": False}


def _configuration_problem(exc: Exception) -> str:
    """What is wrong with the configuration, naming the variable, never its value."""
    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        if not first["loc"]:  # a check across settings: its message names them
            return f"invalid configuration: {first['msg']}"
        name = "NM_" + "_".join(str(part) for part in first["loc"][:1]).upper()
        return f"invalid configuration: {name}: {first['msg']}"
    return f"invalid configuration: {exc}"


def json_problem(body: str) -> InvalidInput | None:
    """What makes a JSON body unsafe to hand on, naming where (``json_input.parse``: an integer of
    too many digits, nesting too deep, a lone surrogate). None when it is fine, or not JSON at all
    (validation says so)."""
    try:
        json_input.parse(body)
    except json_input.JsonRefused as exc:
        return None if exc.syntax else InvalidInput(exc.where, exc.reason)
    return None


class NeuralMemoryResolver(APIGatewayRestResolver):
    """The REST resolver with what must happen before anything parses the body (Powertools
    validates requests before user middlewares run): the service is built (a configuration
    error is a 503 envelope, not a crash that API Gateway turns into a bare 502), the body size
    limit is enforced, and JSON that could not be served (too deep, lone surrogates) is a 400."""

    def __init__(self, *, needs_service: bool = True, **kwargs: Any) -> None:
        self._request = threading.local()
        super().__init__(**kwargs)
        self._needs_service = needs_service

    # Powertools keeps the current event and context on its BaseRouter class, shared by every
    # resolver in the process. The local server runs requests on several threads at once, so a
    # request could read another's event (its body, its workspace): each thread reads its own.
    @property  # type: ignore[override]
    def current_event(self) -> APIGatewayProxyEvent:
        event: APIGatewayProxyEvent = self._request.event
        return event

    @current_event.setter
    def current_event(self, value: APIGatewayProxyEvent) -> None:
        self._request.event = value

    @property
    def lambda_context(self) -> LambdaContext:
        context: LambdaContext = self._request.context
        return context

    @lambda_context.setter
    def lambda_context(self, value: LambdaContext) -> None:
        self._request.context = value

    def _to_proxy_event(self, event: dict[str, Any]) -> BaseProxyEvent:
        proxy = super()._to_proxy_event(event)
        self._request.event = proxy  # what resolve() also puts on the shared class
        return proxy

    def _call_route(self, route: Route, route_arguments: dict[str, str]) -> ResponseBuilder[Any]:
        # Every route's query string is checked here, in one place, as bodies are (extra="forbid").
        if unknown := unknown_query_parameters(route, self.current_event.raw_event):
            declared = [str(param.alias) for param in route.dependant.query_params]
            details = [
                ErrorDetail(field=name, message="unknown query parameter", type="extra_forbidden") for name in unknown
            ]
            reply = _error_response(self, unknown_parameter_error(unknown, declared), details)
            return self._response_builder_class(response=reply, serializer=self._serializer, route=route)
        built: ResponseBuilder[Any] = super()._call_route(route, route_arguments)
        return built

    def resolve(self, event: Mapping[str, Any], context: LambdaContext) -> dict[str, Any]:
        from neural_memory.runtime import current_settings, get_service

        self._request.context = context

        try:
            limit = (get_service().settings if self._needs_service else current_settings()).max_body_bytes
        except (ConfigurationError, ValueError) as exc:  # settings raise ValidationError/SettingsError
            problem = _configuration_problem(exc)
            logger.error("service misconfigured", extra={"reason": problem})
            return _proxy_error(event, ConfigurationError(problem))
        body = event.get("body") or ""
        if isinstance(body, str) and len(body.encode(errors="surrogatepass")) > limit:
            return _proxy_error(event, PayloadTooLarge(limit))
        if isinstance(body, str) and (unsafe := json_problem(body)) is not None:
            return _proxy_error(event, unsafe)
        return super().resolve(_json_by_default(event), context)


# Pages whose query string is the browser's state (the console's filters), never a handler's input.
_PAGE_PREFIX = "/console"


def unknown_query_parameters(route: Route, event: Mapping[str, Any]) -> list[str]:
    """The query-string names a route does not declare, in the order sent: each would otherwise be
    ignored, and a typo (``sourceType=github``) answer 200 as if no filter were given."""
    if route.path.startswith(_PAGE_PREFIX):
        return []
    declared = {str(param.alias) for param in route.dependant.query_params}
    sent = list(event.get("multiValueQueryStringParameters") or {}) or list(event.get("queryStringParameters") or {})
    return [name for name in sent if name not in declared]


def unknown_parameter_error(unknown: Sequence[str], declared: Sequence[str]) -> InvalidInput:
    """The 400 for an unknown query parameter, naming it and what the route takes."""
    takes = ", ".join(sorted(declared)) if declared else "no query parameters"
    return InvalidInput(unknown[0], f"unknown query parameter (this route takes: {takes})")


def build_resolver(*, needs_service: bool = True) -> APIGatewayRestResolver:
    """A REST resolver with request validation, the body size limit and the error envelope;
    ``needs_service=False`` for handlers that use the settings alone (no store is built)."""
    app = NeuralMemoryResolver(enable_validation=True, needs_service=needs_service)

    def _invalid(exc: RequestValidationError) -> Response[str]:
        error, details = validation_failure(exc.errors())
        return _error_response(app, error, details)

    def _unsupported(exc: RequestUnsupportedContentType) -> Response[str]:
        return _error_response(app, UnsupportedMediaType("body must be application/json"))

    def _domain(exc: NeuralMemoryError) -> Response[str]:
        if isinstance(exc, ConfigurationError):
            logger.error("service misconfigured", extra={"reason": str(exc)})
        return _error_response(app, exc)

    def _unexpected(exc: Exception) -> Response[str]:
        logger.exception("unhandled error")
        return _error_response(app, NeuralMemoryError("internal error"))

    def _not_found(exc: Exception) -> Response[str]:
        return _error_response(app, NotFound("no such route"))

    # Registered by call, not decorator: the decorators are untyped.
    app.exception_handler(RequestValidationError)(_invalid)
    app.exception_handler(RequestUnsupportedContentType)(_unsupported)
    app.exception_handler(NeuralMemoryError)(_domain)
    app.exception_handler(Exception)(_unexpected)
    app.not_found(_not_found)
    return app
