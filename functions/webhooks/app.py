"""POST /v1/webhooks/github and /v1/webhooks/vercel — no API key: the provider's signature
authenticates the delivery. Verify, route, hand over (the bus on AWS, the local ingest path on
``make serve``), reply."""

from typing import Any, Literal

from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from neural_memory.api.resolver import ERROR_RESPONSES, build_resolver
from neural_memory.api.webhooks import EventSink, build_event_sink, receive
from neural_memory.models import ErrorResponse, WebhookReceipt
from neural_memory.observability import logger, metrics, tracer
from neural_memory.runtime import current_settings

app = build_resolver(needs_service=False)  # the receiver reads settings only: no store, no model
_sinks: dict[str | None, EventSink] = {}  # by bus: built on the first delivery, the client kept
_DOCUMENTED: dict[int, OpenAPIResponse] = {
    200: {"description": "Verified and handed to ingestion (or a ping, answered)"},
    **ERROR_RESPONSES,
    401: {
        "description": "Missing or invalid signature: nothing is stored",
        "content": {"application/json": {"model": ErrorResponse}},
    },
    422: {
        "description": "unrouted: no workspace is configured for the repository or team; nothing is stored",
        "content": {"application/json": {"model": ErrorResponse}},
    },
}


def _deliver(source: Literal["github", "vercel"]) -> WebhookReceipt:
    settings = current_settings()
    if settings.event_bus not in _sinks:
        _sinks[settings.event_bus] = build_event_sink(settings)
    event = app.current_event
    body = event.decoded_body.encode() if event.decoded_body else b""
    receipt = receive(settings, _sinks[settings.event_bus], source, dict(event.headers or {}), body)
    logger.info("webhook delivery", extra=receipt.model_dump(by_alias=True))
    return receipt


@app.post(
    "/v1/webhooks/github",
    summary="Receive a GitHub webhook delivery",
    description="Signed with X-Hub-Signature-256 (HMAC-SHA256 of the body with the webhook's secret); "
    "content type application/json.",
    responses=_DOCUMENTED,
    tags=["webhooks"],
    security=[],
)
@tracer.capture_method(capture_response=False)  # payloads never go to X-Ray
def github() -> WebhookReceipt:
    """One GitHub delivery."""
    return _deliver("github")


@app.post(
    "/v1/webhooks/vercel",
    summary="Receive a Vercel webhook delivery",
    description="Signed with x-vercel-signature (HMAC-SHA1 of the body with the webhook's secret).",
    responses=_DOCUMENTED,
    tags=["webhooks"],
    security=[],
)
@tracer.capture_method(capture_response=False)
def vercel() -> WebhookReceipt:
    """One Vercel delivery."""
    return _deliver("vercel")


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@metrics.log_metrics(capture_cold_start_metric=True)
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """API Gateway REST proxy entry point."""
    return app.resolve(event, context)
