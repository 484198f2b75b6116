"""A typed Python client of the Neural Memory API (``make serve`` or a deployed stack), sync and async.

Requests are sent as given and validated by the server, the one judge of the contract: a bad field
comes back as ``ValidationFailed`` naming it. Replies are parsed into the server's own wire models
(``neural_memory.models``), ignoring fields a newer server adds. Every error reply becomes an
``ApiError`` subclass carrying the envelope's code, message, field details and request id. Only
429 and 503 replies with ``Retry-After`` are retried (the server said when), with exponential
backoff; nothing else is.

By role: ``errors.py`` (the exceptions), ``requests.py`` (connection, retry policy and the requests
both clients send), ``sync.py`` and ``aio.py`` (the two clients). Everything public is re-exported
here: ``from neural_memory.client import NeuralMemoryClient``.
"""

from neural_memory.client.aio import (
    AsyncNeuralMemoryClient,
)
from neural_memory.client.errors import (
    ApiError,
    ClientConfigurationError,
    ClientError,
    NotFound,
    PayloadTooLarge,
    ServerError,
    ServiceUnavailable,
    StoreRejected,
    Throttled,
    TransportFailed,
    Unauthenticated,
    ValidationFailed,
    error_from_reply,
    retry_after_s,
)
from neural_memory.client.requests import (
    API_KEY_VARIABLE,
    API_URL_VARIABLE,
    DEFAULT_TIMEOUT_S,
    DEFAULT_URL,
    MAX_BATCH,
    RETRY_STATUSES,
    RetryPolicy,
)
from neural_memory.client.sync import (
    NeuralMemoryClient,
)

__all__ = [
    "API_KEY_VARIABLE",
    "API_URL_VARIABLE",
    "ApiError",
    "AsyncNeuralMemoryClient",
    "ClientConfigurationError",
    "ClientError",
    "DEFAULT_TIMEOUT_S",
    "DEFAULT_URL",
    "MAX_BATCH",
    "NeuralMemoryClient",
    "NotFound",
    "PayloadTooLarge",
    "RETRY_STATUSES",
    "RetryPolicy",
    "ServerError",
    "ServiceUnavailable",
    "StoreRejected",
    "Throttled",
    "TransportFailed",
    "Unauthenticated",
    "ValidationFailed",
    "error_from_reply",
    "retry_after_s",
]
