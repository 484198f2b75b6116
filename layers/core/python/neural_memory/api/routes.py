"""The one route table: every HTTP route, the function that serves it, and how it is authorized.
The API's operations (``neural_memory/operations.py``) are its first routes.

The CDK API construct and the local gateway are both built from ``ROUTES``, so a route cannot
exist in one runtime and not in the other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from neural_memory.operations import OPERATIONS

# api_key: the Lambda authorizer; signature: no authorizer, the function checks the provider's HMAC;
# none: a static page holding no data (the console; the calls it makes carry the API key).
Authorization = Literal["api_key", "signature", "none"]


@dataclass(frozen=True)
class Route:
    """One route: ``path`` is an API Gateway resource path (``/v1/observations/{id}``); ``function``
    is the folder under ``functions/`` whose ``app.lambda_handler`` serves it."""

    method: str
    path: str
    function: str
    authorization: Authorization = "api_key"
    has_body: bool = False

    @property
    def pattern(self) -> re.Pattern[str]:
        """A regular expression matching request paths, with one named group per path parameter."""
        return re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.path) + "$")


ROUTES: tuple[Route, ...] = (
    *(Route(o.method, o.path, o.function, has_body=o.request is not None) for o in OPERATIONS),
    # GET /v1/experts: the experts operation with its request as query parameters
    Route("GET", "/v1/experts", "search"),
    # MCP's streamable HTTP transport (stateless: GET and DELETE are answered 405 by the function)
    Route("POST", "/mcp", "mcp"),
    Route("GET", "/mcp", "mcp"),
    Route("DELETE", "/mcp", "mcp"),
    Route("GET", "/console", "search", authorization="none"),
    Route("GET", "/console/{asset}", "search", authorization="none"),
    Route("POST", "/v1/webhooks/github", "webhooks", authorization="signature", has_body=True),
    Route("POST", "/v1/webhooks/vercel", "webhooks", authorization="signature", has_body=True),
)


# Paths served outside the table (the local gateway's health, its OpenAPI document).
_PLAIN_PATHS = frozenset({"/", "/health", "/openapi.json"})


def route_template(target: str) -> str:
    """What a log line may say of a request target: the route's template (``/v1/observations/{id}``),
    never its query string or a path parameter's value (either may carry a secret, a query's free
    text); ``(no route)`` for a path outside the table."""
    from urllib.parse import unquote, urlsplit

    path = unquote(urlsplit(target).path)
    if path in _PLAIN_PATHS:
        return path
    return next((route.path for route in ROUTES if route.pattern.match(path)), "(no route)")


def route_functions() -> list[str]:
    """The functions that serve routes, each once, in table order."""
    return list(dict.fromkeys(route.function for route in ROUTES))
