"""The errors the client raises: ``ApiError`` per error reply (from the envelope), ``TransportFailed``
when no reply came, ``ClientConfigurationError`` when no client can be built."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import ValidationError

from neural_memory.models import (
    ErrorDetail,
    ErrorResponse,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    import httpx


__all__ = [
    "ClientError",
    "ClientConfigurationError",
    "TransportFailed",
    "ApiError",
    "ValidationFailed",
    "Unauthenticated",
    "NotFound",
    "Conflict",
    "PayloadTooLarge",
    "StoreRejected",
    "Throttled",
    "ServiceUnavailable",
    "ServerError",
    "error_from_reply",
    "retry_after_s",
]


class ClientError(Exception):
    """Base of every error this client raises."""


class ClientConfigurationError(ClientError):
    """The client cannot be built: no API key, or an unusable base URL."""


class TransportFailed(ClientError):
    """No reply: the connection failed or the request timed out (``__cause__`` is httpx's error)."""


class ApiError(ClientError):
    """The API answered with an error envelope: its status, code, message, field details and request id."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Sequence[ErrorDetail] = (),
        request_id: str | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = list(details)
        self.request_id = request_id
        self.retry_after_s = retry_after_s


class ValidationFailed(ApiError):
    """400: a field is missing, unknown, of the wrong type or out of bounds (``details[].field``)."""


class Unauthenticated(ApiError):
    """401: no key, an unknown or a revoked key."""


class NotFound(ApiError):
    """404: no such observation in the key's workspace (another workspace's ids included), or no
    such route (a base URL missing its stage, say)."""


class Conflict(ApiError):
    """409: the observation's state does not allow the change (promoting one that is not a live C
    observation: the message says its tier)."""


class PayloadTooLarge(ApiError):
    """413: the body is over the server's limit; send fewer observations per request."""


class StoreRejected(ApiError):
    """422: the store refused some observations for good (the message names each and why)."""


class Throttled(ApiError):
    """429: over the deployment's rate limit (raised once the retries are spent)."""


class ServiceUnavailable(ApiError):
    """503: the store or embedder is down, or the deployment is misconfigured (``code`` says which)."""


class ServerError(ApiError):
    """Any other error reply (500 is a bug: report it with ``request_id``)."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: ValidationFailed,
    401: Unauthenticated,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: StoreRejected,
    429: Throttled,
    503: ServiceUnavailable,
}


def error_from_reply(response: httpx.Response) -> ApiError:
    """The typed error of a non-2xx reply; a body that is not the envelope (a proxy's page) keeps its text."""
    retry_after = retry_after_s(response)
    kind = _BY_STATUS.get(response.status_code, ServerError)
    try:
        envelope = ErrorResponse.model_validate_json(response.content, extra="ignore")
    except ValidationError:
        text = response.text.strip()[:500] or response.reason_phrase
        return kind(response.status_code, "http_error", text, retry_after_s=retry_after)
    error = envelope.error
    return kind(response.status_code, error.code, error.message, error.details, envelope.request_id, retry_after)


def retry_after_s(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds (delay-seconds form; an HTTP date is not used by this API)."""
    value = response.headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
