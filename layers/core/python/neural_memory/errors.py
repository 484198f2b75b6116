"""Typed domain errors. Each carries its HTTP status, its code and the headers its reply needs, so
the resolver, the local gateway and the local server turn any of them into the same envelope
(``neural_memory.api.resolver.error_reply``)."""

from __future__ import annotations

from http import HTTPStatus
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


class NeuralMemoryError(Exception):
    """Base class of every error the service raises on purpose."""

    code = "internal_error"
    status = HTTPStatus.INTERNAL_SERVER_ERROR

    def headers(self) -> dict[str, str]:
        """Extra reply headers (e.g. ``Retry-After``)."""
        return {}


class Unauthorized(NeuralMemoryError):
    """No API key, or one that is unknown or revoked."""

    code = "unauthorized"
    status = HTTPStatus.UNAUTHORIZED


class Forbidden(NeuralMemoryError):
    """A valid key whose role does not allow the call (``auth/roles.py``): the message names the
    role needed, and what the key's own role is."""

    code = "forbidden"
    status = HTTPStatus.FORBIDDEN


class NotFound(NeuralMemoryError):
    """The resource (or route) does not exist in the caller's workspace."""

    code = "not_found"
    status = HTTPStatus.NOT_FOUND


class Conflict(NeuralMemoryError):
    """The resource exists, but its state does not allow the change (e.g. promoting an A)."""

    code = "conflict"
    status = HTTPStatus.CONFLICT


class MethodNotAllowed(NeuralMemoryError):
    """The path exists, but not with this method."""

    code = "method_not_allowed"
    status = HTTPStatus.METHOD_NOT_ALLOWED


class PayloadTooLarge(NeuralMemoryError):
    """The request body is over the configured limit."""

    code = "payload_too_large"
    status = HTTPStatus.REQUEST_ENTITY_TOO_LARGE

    def __init__(self, limit: int) -> None:
        super().__init__(f"body is over {limit} bytes")


class UnsupportedMediaType(NeuralMemoryError):
    """The body is not JSON."""

    code = "unsupported_media_type"
    status = HTTPStatus.UNSUPPORTED_MEDIA_TYPE


class InvalidInput(NeuralMemoryError):
    """Input that passed schema validation but cannot be served (names the field)."""

    code = "validation_error"
    status = HTTPStatus.BAD_REQUEST

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class BackendUnavailable(NeuralMemoryError):
    """A required backend (store, embedder) is down; the client may retry later."""

    code = "backend_unavailable"
    status = HTTPStatus.SERVICE_UNAVAILABLE

    def __init__(self, message: str, retry_after_s: int = 5) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_s)}


class PartiallyApplied(BackendUnavailable):
    """A write stored its observations but failed in a later step (their supersession marks):
    the reply names exactly what was stored, and the same request sent again completes it (every
    step is idempotent by id), which the 503 with ``Retry-After`` invites."""

    def __init__(self, stored: Sequence[str], step: str) -> None:
        super().__init__(
            f"stored {len(stored)} observations ({', '.join(stored)}) but {step} failed: "
            "send the same request again to complete it (it is idempotent)",
            retry_after_s=1,
        )
        self.stored = list(stored)


class StoreRejected(NeuralMemoryError):
    """The store refused observations for a reason a retry cannot fix; ``failed`` maps each refused
    observation's id to the store's reason (the others of the same call were stored)."""

    code = "store_rejected"
    status = HTTPStatus.UNPROCESSABLE_ENTITY

    def __init__(self, message: str, failed: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.failed = dict(failed or {})

    @classmethod
    def of(cls, failed: Mapping[str, str], attempted: int) -> StoreRejected:
        """The error for ``failed`` among ``attempted`` observations, naming the first few."""
        named = "; ".join(f"{i}: {reason}" for i, reason in list(failed.items())[:5])
        kept = attempted - len(failed)
        return cls(f"the store refused {len(failed)} of {attempted} observations ({kept} stored): {named}", failed)


class Unrouted(NeuralMemoryError):
    """A webhook delivery from a repository or team no workspace is configured for."""

    code = "unrouted"
    status = HTTPStatus.UNPROCESSABLE_ENTITY


class ConfigurationError(NeuralMemoryError):
    """The service is configured in a way that cannot work (raised at first use, with the fix)."""

    code = "configuration_error"
    status = HTTPStatus.SERVICE_UNAVAILABLE

    def headers(self) -> dict[str, str]:
        return {"Retry-After": "60"}


class StoreModelMismatch(ConfigurationError):
    """The embedded store holds the vectors of another embedding model than the one configured:
    its vectors cannot be compared with this model's, so vector search and embedded writes are
    refused until ``neural-memory reindex`` rebuilds it (keyword-only use is never refused)."""

    code = "store_model_mismatch"


class SecretUnavailable(ConfigurationError):
    """A provider's secret cannot be read (no grant, deleted, unreachable); the provider degrades."""
