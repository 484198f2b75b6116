"""Calling the functions' handlers in-process, as API Gateway would."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from functions.observations import app as observations_app
from functions.search import app as search_app
from tests.helpers.events import api_event

if TYPE_CHECKING:
    from neural_memory.local.serving.gateway import LocalLambdaContext


def call(handler_module: Any, event: dict[str, Any], context: LocalLambdaContext) -> tuple[int, dict[str, Any]]:
    """Invoke a function's handler; returns status and decoded body."""
    reply = handler_module.lambda_handler(event, context)
    return reply["statusCode"], json.loads(reply["body"])


def search(body: Any, context: LocalLambdaContext, workspace: str | None = "acme") -> tuple[int, dict[str, Any]]:
    return call(search_app, api_event("api/search_post", body, workspace), context)


def ingest(body: Any, context: LocalLambdaContext, workspace: str | None = "acme") -> tuple[int, dict[str, Any]]:
    return call(observations_app, api_event("api/observations_post", body, workspace), context)
