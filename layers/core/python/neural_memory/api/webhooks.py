"""Webhook receivers: GitHub and Vercel deliveries, authenticated by their HMAC signature, routed to
a workspace by configuration and handed to the ingestion path as the EventBridge event the ingest
rules match (``source`` github/vercel, the event name as ``detail-type``, the payload as
``detail`` plus the delivery id under ``DELIVERY_KEY``).

On AWS the event goes onto the bus (EventBridge → SQS → the ingest function, with its retries and
dead letters); locally (``make serve``) it is ingested at once, through the same consumer code.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from neural_memory import json_input
from neural_memory.api.resolver import header
from neural_memory.errors import (
    BackendUnavailable,
    ConfigurationError,
    InvalidInput,
    PayloadTooLarge,
    Unauthorized,
    Unrouted,
)
from neural_memory.ingest.normalizers import MalformedEvent, UnsupportedEvent, normalize_eventbridge
from neural_memory.ingest.routing import route_key
from neural_memory.models import WebhookReceipt
from neural_memory.observability import logger

if TYPE_CHECKING:
    from collections.abc import Mapping

    from neural_memory.settings import Settings

SourceName = Literal["github", "vercel"]
DELIVERY_KEY = "neural-memory-delivery"  # never a key of a GitHub or Vercel payload
# EventBridge refuses an entry over 256 KiB (source, detail-type and detail together).
EVENT_MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class WebhookSource:
    """How one provider signs and names its deliveries."""

    name: SourceName
    signature_header: str
    algorithm: str  # hashlib name
    prefix: str  # before the hex digest in the header
    event_header: str | None  # the event name's header; None: the payload's "type"
    delivery_header: str | None  # the delivery id's header; None: the payload's "id"


SOURCES: dict[SourceName, WebhookSource] = {
    "github": WebhookSource(
        "github", "X-Hub-Signature-256", "sha256", "sha256=", "X-GitHub-Event", "X-GitHub-Delivery"
    ),
    "vercel": WebhookSource("vercel", "x-vercel-signature", "sha1", "", None, None),
}


class EventSink(Protocol):
    """Where a verified delivery goes: the event bus, or the local ingest path."""

    def send(self, event: dict[str, Any]) -> str:
        """Hand over one EventBridge-shaped event; returns where it went (for the receipt)."""
        ...


def refusal(source: WebhookSource) -> Unauthorized:
    """The one 401 of a delivery that is not verified, whatever the reason (no signature, a wrong
    one, no secret for the route it names): a reply that differed would tell anyone which
    repositories or teams are routed. The reason goes to the server's log only."""
    return Unauthorized(f"missing or invalid {source.signature_header} signature")


def verify(source: WebhookSource, secret: str, body: bytes, headers: Mapping[str, str]) -> None:
    """``Unauthorized`` unless ``headers`` carry the HMAC of ``body`` under ``secret`` (compared
    in constant time)."""
    presented = header(headers, source.signature_header) or ""
    expected = source.prefix + hmac.new(secret.encode(), body, source.algorithm).hexdigest()
    if not hmac.compare_digest(presented.encode(), expected.encode()):
        raise refusal(source)


def receive(
    settings: Settings, sink: EventSink, name: SourceName, headers: Mapping[str, str], body: bytes
) -> WebhookReceipt:
    """Verify one delivery, find its workspace and hand it to ``sink``. The secret is the one of the
    route the payload names (a JSON secret maps routes to secrets, so one tenant's secret cannot
    sign another's events), else the provider's single secret. A ping, or an event the ingestion
    does not observe, is answered without being sent; an unrouted repository or team is
    ``Unrouted``."""
    source = SOURCES[name]
    payload = _payload(body)
    kind = header(headers, source.event_header) if source.event_header else payload.get("type")
    delivery = _delivery_id(header(headers, source.delivery_header)) if source.delivery_header else payload.get("id")
    delivery = delivery if isinstance(delivery, str) else None  # only named in the receipt
    event = {"source": name, "detail-type": kind, "detail": {**payload, DELIVERY_KEY: delivery}}
    try:
        key: str | None = route_key(event)
    except UnsupportedEvent:
        key = None
    _verify_with_route_secret(settings, source, key, body, headers)
    if not isinstance(kind, str) or not kind:
        raise InvalidInput(source.event_header or "type", "names no event")
    workspace = settings.ingest_routes.get(key) if key else None
    # The event header is outside the signature too: the receipt (and its log line) names it only
    # as an event's name (``pull_request``), else by digest.
    named = kind if not source.event_header or _EVENT_NAME.match(kind) else _unverified(kind)
    receipt = WebhookReceipt(delivery_id=delivery, event=named, routed_to=workspace, sent_to=None)
    if kind == "ping":
        return receipt
    if workspace is None:
        what = key or f"this {name} event"
        raise Unrouted(f"no workspace is configured for {what}; add one with `neural-memory routes add`")
    try:  # what the ingestion would not observe is answered here, not dead-lettered later
        normalized = normalize_eventbridge(event)
    except MalformedEvent as exc:  # signed, but not the shape the provider documents: the sender's fault
        raise InvalidInput("body", str(exc)) from exc
    except UnsupportedEvent as exc:
        return receipt.model_copy(update={"skipped": str(exc).replace(kind, named)})  # the reason names the event
    if not normalized.observations:
        return receipt.model_copy(update={"skipped": normalized.skipped.reason if normalized.skipped else "nothing"})
    if len(json.dumps(event).encode()) > EVENT_MAX_BYTES:
        raise PayloadTooLarge(EVENT_MAX_BYTES)
    return receipt.model_copy(update={"sent_to": sink.send(event)})


_EVENT_NAME = re.compile(r"^[a-z_]{1,40}$")  # GitHub's event names: push, pull_request, check_run, …
_GUID = re.compile(r"^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$")


def _delivery_id(value: str | None) -> str | None:
    """The delivery header as the receipt (and the log line that prints it) may carry it: a GUID,
    as GitHub sends, as is; anything else is not covered by the signature, so it could be anything
    a sender put there (a token): ``unverified-<digest>``, the first 16 hex characters of its SHA-256,
    still telling deliveries apart."""
    if value is None or _GUID.match(value):
        return value
    return _unverified(value)


def _unverified(value: str) -> str:
    return "unverified-" + hashlib.sha256(value.encode()).hexdigest()[:16]


def _payload(body: bytes) -> dict[str, Any]:
    """The delivery's JSON object (read before the signature check only to find its route)."""
    try:
        payload = json_input.parse(body)
    except json_input.JsonRefused as exc:
        raise InvalidInput(exc.where, exc.reason if not exc.syntax else "not a JSON payload") from exc
    if not isinstance(payload, dict):
        raise InvalidInput("body", "not a JSON object")
    return payload


def _verify_with_route_secret(
    settings: Settings, source: WebhookSource, key: str | None, body: bytes, headers: Mapping[str, str]
) -> None:
    """``verify`` with the route's secret; on a mismatch, or no secret for the route, the secrets
    are read again once (they may have been set or rotated since this container read them), then
    the refusal stands: the same reply either way (``refusal``), the reason in the log."""
    variable = f"NM_{source.name.upper()}_WEBHOOK_SECRET"
    for fresh in (False, True):
        secrets = settings.webhook_secrets(source.name, fresh=fresh)
        if problem := settings.shared_secret_problem(source.name, secrets):  # read from Secrets Manager
            raise ConfigurationError(problem)
        secret = secrets.get(key or "") or secrets.get("*")
        try:
            if not secret:  # nothing can verify the delivery: it is refused like an unsigned one
                raise refusal(source)
            verify(source, secret, body, headers)
            return
        except Unauthorized:
            if not fresh:
                continue
            route = key or f"a {source.name} event naming no route"
            if secret:
                logger.warning(f"webhook refused: {route}: missing or invalid signature", extra={"route": key})
            else:
                setting = f"{variable} (or {variable}_ARN)"
                logger.error(
                    f"webhook refused: {route}: no secret configured for it in {setting}",
                    extra={"route": key, "setting": setting},
                )
            raise


class EventBridgeSink:
    """Puts events on the stack's bus (``NM_EVENT_BUS``); boto3 loads on first use."""

    def __init__(self, bus_name: str) -> None:
        self._bus_name = bus_name
        self._client: Any = None

    def send(self, event: dict[str, Any]) -> str:
        """One ``PutEvents`` entry; a failed entry is ``BackendUnavailable`` (the sender retries)."""
        import boto3
        from botocore.exceptions import BotoCoreError, ClientError

        if self._client is None:
            self._client = boto3.client("events")
        entry = {
            "EventBusName": self._bus_name,
            "Source": event["source"],
            "DetailType": event["detail-type"],
            "Detail": json.dumps(event["detail"]),
        }
        try:
            reply = self._client.put_events(Entries=[entry])
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if "AccessDenied" in code:
                raise ConfigurationError(f"this function may not put events on {self._bus_name}: {code}") from exc
            raise BackendUnavailable(f"EventBridge: {code}") from exc
        except BotoCoreError as exc:
            raise BackendUnavailable(f"EventBridge unreachable: {type(exc).__name__}") from exc
        if reply.get("FailedEntryCount"):
            failed = reply["Entries"][0]
            raise BackendUnavailable(
                f"EventBridge refused the event: {failed.get('ErrorCode')} {failed.get('ErrorMessage')}"
            )
        return f"eventbridge:{self._bus_name}"


class LocalIngestSink:
    """``make serve``: the event is ingested at once by the SQS consumer's own code, into the
    process's service."""

    def send(self, event: dict[str, Any]) -> str:
        """Index the event now; its failure is the request's (with the reason)."""
        from neural_memory.runtime import get_service

        get_service().index_event(json.dumps(event))
        return "local"


def build_event_sink(settings: Settings) -> EventSink:
    """The bus when ``NM_EVENT_BUS`` is set (AWS), else the local ingest path."""
    if settings.event_bus:
        return EventBridgeSink(settings.event_bus)
    return LocalIngestSink()
