"""Typed domain errors. They are mapped to HTTP statuses in one place: ``neural_memory.http``."""

from __future__ import annotations


class NeuralMemoryError(Exception):
    """Base class of every error the service raises on purpose."""

    code = "internal_error"


class Unauthorized(NeuralMemoryError):
    """No API key, or one that is unknown or revoked."""

    code = "unauthorized"


class NotFound(NeuralMemoryError):
    """The resource does not exist in the caller's workspace."""

    code = "not_found"


class PayloadTooLarge(NeuralMemoryError):
    """The request body is over the configured limit."""

    code = "payload_too_large"


class InvalidInput(NeuralMemoryError):
    """Input that passed schema validation but cannot be served (names the field)."""

    code = "validation_error"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class BackendUnavailable(NeuralMemoryError):
    """A required backend (store, embedder) is down; the client may retry later."""

    code = "backend_unavailable"

    def __init__(self, message: str, retry_after_s: int = 5) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ConfigurationError(NeuralMemoryError):
    """The service is configured in a way that cannot work (raised at first use, with the fix)."""

    code = "configuration_error"


class SecretUnavailable(ConfigurationError):
    """A provider's secret cannot be read (no grant, deleted, unreachable); the provider degrades."""
