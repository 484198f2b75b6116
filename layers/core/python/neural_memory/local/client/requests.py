"""What both clients share: the connection settings, the retry policy and the requests each method
sends (built once here from the API's operations, ``neural_memory/operations.py``; sent by the sync
or the async client)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from neural_memory.models import (
    ObservationsResponse,
)
from neural_memory.operations import BY_NAME, Operation

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    import httpx

    from neural_memory.models import ObservationIn

from neural_memory.local.client.errors import ClientConfigurationError, error_from_reply, retry_after_s

__all__ = [
    "API_URL_VARIABLE",
    "API_KEY_VARIABLE",
    "DEFAULT_URL",
    "DEFAULT_TIMEOUT_S",
    "MAX_BATCH",
    "RETRY_STATUSES",
    "RetryPolicy",
]

API_URL_VARIABLE = "NM_API_URL"
API_KEY_VARIABLE = "NM_API_KEY"
DEFAULT_URL = "http://127.0.0.1:8080"  # `make serve`
DEFAULT_TIMEOUT_S = 30.0  # API Gateway gives up at 29 s
MAX_BATCH = 100  # observations per POST /v1/observations (the server's limit)
RETRY_STATUSES = frozenset({429, 503})

Reply = TypeVar("Reply", bound=BaseModel)


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of 429/503 replies that carry ``Retry-After``: wait the larger of it and the
    exponential backoff (``backoff_s × 2^attempt``); a wait over ``max_wait_s`` is not waited
    for (the error is raised at once, with ``retry_after_s`` for the caller to decide)."""

    max_retries: int = 3
    backoff_s: float = 0.5
    max_wait_s: float = 30.0

    def delay(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before retry number ``attempt + 1``, or None: do not retry."""
        retry_after = retry_after_s(response)
        if response.status_code not in RETRY_STATUSES or retry_after is None or attempt >= self.max_retries:
            return None
        wait = max(retry_after, self.backoff_s * 2**attempt)
        return wait if wait <= self.max_wait_s else None


# A DELETE answered 503 may have been applied before the failure: retried, it would say NotFound
# about an observation it deleted. It is raised instead (deleting again is the caller's call).
NOT_RETRIED = {"DELETE"}


@dataclass(frozen=True)
class Call:
    """One API call: method, path relative to the base URL, and JSON body."""

    method: str
    path: str
    body: dict[str, Any] | None = None
    params: dict[str, Any] | None = None


def without_none(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


def wire(value: Any) -> Any:
    """A request value as JSON: models by their camelCase names, only the fields that were set."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, list | tuple):
        return [wire(item) for item in value]
    return value


def operation_call(
    operation: Operation, request: Any = None, params: Mapping[str, Any] | None = None, body: Any = None
) -> Call:
    """Any operation: ``request`` is the observation id its path names (a string; ``body``, if it
    takes one besides) or its body."""
    if isinstance(request, str):
        if not request:
            raise ValueError("observation_id must not be empty")
        path = operation.target(id=request)
    else:
        path, body = operation.target(), request
    wired = None if body is None else {name: wire(value) for name, value in dict(body).items()}
    return Call(operation.method, path, wired, dict(params) if params else None)


def asking(name: str, text_field: str, text: str, fields: Mapping[str, Any], options: Mapping[str, Any] | None) -> Call:
    """A search, an answer or an experts request: the text, the given fields, and any other request
    field by its API name."""
    return operation_call(BY_NAME[name], {**without_none({text_field: text, **fields}), **without_none(options or {})})


def batches(observations: Sequence[ObservationIn | Mapping[str, Any]], size: int) -> Iterator[Call]:
    if not 1 <= size <= MAX_BATCH:
        raise ValueError(f"batch_size must be 1..{MAX_BATCH}")
    if not observations:  # the server says what is wrong with that (ValidationFailed)
        yield operation_call(BY_NAME["add"], {"observations": []})
    for start in range(0, len(observations), size):
        yield operation_call(BY_NAME["add"], {"observations": observations[start : start + size]})


def facets_call(
    source_types: Sequence[str] | None,
    observation_types: Sequence[str] | None,
    actor_names: Sequence[str] | None,
    tiers: Sequence[str] | None,
    start: datetime | str | None,
    end: datetime | str | None,
    limit: int | None,
) -> Call:
    """``GET /v1/facets``: list filters as repeated query parameters, times as ISO-8601."""
    params = {
        "sourceTypes": source_types,
        "observationTypes": observation_types,
        "actorNames": actor_names,
        "tiers": tiers,
        "start": start.isoformat() if isinstance(start, datetime) else start,
        "end": end.isoformat() if isinstance(end, datetime) else end,
        "limit": limit,
    }
    return operation_call(
        BY_NAME["facets"], params={name: value for name, value in params.items() if value is not None}
    )


def merged(replies: Sequence[ObservationsResponse]) -> ObservationsResponse:
    """The batches' replies as one: ids in input order, counts summed, every request id."""
    return ObservationsResponse(
        ids=list(dict.fromkeys(i for reply in replies for i in reply.ids)),
        created=sum(reply.created for reply in replies),
        updated=sum(reply.updated for reply in replies),
        request_id=",".join(reply.request_id for reply in replies),
    )


def parsed(response: httpx.Response, model: type[Reply]) -> Reply:
    if response.is_success:
        # A newer server may add fields (the server's models forbid unknown ones in requests, not here).
        return model.model_validate_json(response.content, extra="ignore")
    raise error_from_reply(response)


def connection(base_url: str | None, api_key: str | None) -> tuple[str, dict[str, str]]:
    """The base URL (argument, ``NM_API_URL``, else ``make serve``'s) and the auth header (the
    argument or ``NM_API_KEY``)."""
    url = (base_url or os.environ.get(API_URL_VARIABLE) or DEFAULT_URL).strip()
    if not url.startswith(("http://", "https://")):
        raise ClientConfigurationError(f"base_url must be an http(s) URL, got {url!r}")
    key = (api_key or os.environ.get(API_KEY_VARIABLE) or "").strip()
    if not key:
        raise ClientConfigurationError(f"no API key: pass api_key or set {API_KEY_VARIABLE}")
    # A stage URL (https://…/v1/) keeps its path: requests are relative to it, as in <ApiUrl>v1/search.
    return url.rstrip("/") + "/", {"Authorization": f"Bearer {key}", "Accept": "application/json"}
