"""A typed Python client of the Neural Memory API (``make serve`` or a deployed stack), sync and async.

Requests are sent as given and validated by the server, the one judge of the contract: a bad field
comes back as ``ValidationFailed`` naming it. Replies are parsed into the server's own wire models
(``neural_memory.models``), ignoring fields a newer server adds. Every error reply becomes an
``ApiError`` subclass carrying the envelope's code, message, field details and request id. Only
429 and 503 replies with ``Retry-After`` are retried (the server said when), with exponential
backoff; nothing else is.

By role: ``errors.py`` (the exceptions), ``requests.py`` (connection, retry policy and the requests
both clients send), ``sync.py`` and ``aio.py`` (the two clients). Everything public is re-exported
here: ``from neural_memory.local.client import NeuralMemoryClient``.
"""

from neural_memory.local.client import aio, errors, requests, sync
from neural_memory.local.client.aio import *  # noqa: F403
from neural_memory.local.client.errors import *  # noqa: F403
from neural_memory.local.client.requests import *  # noqa: F403
from neural_memory.local.client.sync import *  # noqa: F403

__all__: list[str] = []
__all__ += aio.__all__
__all__ += errors.__all__
__all__ += requests.__all__
__all__ += sync.__all__
