"""A typed Python client of the Neural Memory API (``make serve`` or a deployed stack), sync and async.

Requests are sent as given and validated by the server, the one judge of the contract: a bad field
comes back as ``ValidationFailed`` naming it. Replies are parsed into the server's own wire models
(``neural_memory.models``), ignoring fields a newer server adds. Every error reply becomes an
``ApiError`` subclass carrying the envelope's code, message, field details and request id. Only
429 and 503 replies with ``Retry-After`` are retried (the server said when), with exponential
backoff; nothing else is.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Self, TypeVar
from urllib.parse import quote

import anyio
import httpx
from pydantic import BaseModel, ValidationError

from neural_memory.models import (
    AnswerResponse,
    DeleteResponse,
    ErrorDetail,
    ErrorResponse,
    FacetsResponse,
    ObservationOut,
    ObservationsResponse,
    SearchResponse,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence
    from types import TracebackType

    from neural_memory.models import ObservationIn, SearchFilters, SearchMode

API_URL_VARIABLE = "NM_API_URL"
API_KEY_VARIABLE = "NM_API_KEY"
DEFAULT_URL = "http://127.0.0.1:8080"  # `make serve`
DEFAULT_TIMEOUT_S = 30.0  # API Gateway gives up at 29 s
MAX_BATCH = 100  # observations per POST /v1/observations (the server's limit)
RETRY_STATUSES = frozenset({429, 503})

Reply = TypeVar("Reply", bound=BaseModel)


# --------------------------------------------------------------------------- errors


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


# --------------------------------------------------------------------------- requests


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
_NOT_RETRIED = {"DELETE"}


@dataclass(frozen=True)
class _Call:
    """One API call: method, path relative to the base URL, and JSON body."""

    method: str
    path: str
    body: dict[str, Any] | None = None
    params: dict[str, Any] | None = None


def _without_none(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {name: _wire(value) for name, value in fields.items() if value is not None}


def _wire(value: Any) -> Any:
    """A request value as JSON: models by their camelCase names, only the fields that were set."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, list | tuple):
        return [_wire(item) for item in value]
    return value


def _asking(
    path: str, text_field: str, text: str, fields: Mapping[str, Any], options: Mapping[str, Any] | None
) -> _Call:
    """A search or an answer: the text, the given fields, and any other request field by its API name."""
    return _Call("POST", path, {**_without_none({text_field: text, **fields}), **_without_none(options or {})})


def _batches(observations: Sequence[ObservationIn | Mapping[str, Any]], size: int) -> Iterator[_Call]:
    if not 1 <= size <= MAX_BATCH:
        raise ValueError(f"batch_size must be 1..{MAX_BATCH}")
    if not observations:  # the server says what is wrong with that (ValidationFailed)
        yield _Call("POST", "v1/observations", {"observations": []})
    for start in range(0, len(observations), size):
        chunk = [_wire(o) for o in observations[start : start + size]]
        yield _Call("POST", "v1/observations", {"observations": chunk})


def _observation(method: str, observation_id: str) -> _Call:
    if not observation_id:
        raise ValueError("observation_id must not be empty")
    return _Call(method, f"v1/observations/{quote(observation_id, safe='')}")


def _facets(
    source_types: Sequence[str] | None,
    observation_types: Sequence[str] | None,
    actor_names: Sequence[str] | None,
    tiers: Sequence[str] | None,
    start: datetime | str | None,
    end: datetime | str | None,
    limit: int | None,
) -> _Call:
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
    return _Call("GET", "v1/facets", params={name: value for name, value in params.items() if value is not None})


def _merged(replies: Sequence[ObservationsResponse]) -> ObservationsResponse:
    """The batches' replies as one: ids in input order, counts summed, every request id."""
    return ObservationsResponse(
        ids=list(dict.fromkeys(i for reply in replies for i in reply.ids)),
        created=sum(reply.created for reply in replies),
        updated=sum(reply.updated for reply in replies),
        request_id=",".join(reply.request_id for reply in replies),
    )


def _parsed(response: httpx.Response, model: type[Reply]) -> Reply:
    if response.is_success:
        # A newer server may add fields (the server's models forbid unknown ones in requests, not here).
        return model.model_validate_json(response.content, extra="ignore")
    raise error_from_reply(response)


def _connection(base_url: str | None, api_key: str | None) -> tuple[str, dict[str, str]]:
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


# --------------------------------------------------------------------------- clients


class NeuralMemoryClient:
    """The API over HTTP, synchronously. Use as a context manager (or call ``close``).

    ``base_url``: the server (``http://127.0.0.1:8080``) or a stack's ``ApiUrl``; default
    ``NM_API_URL``, else ``make serve``'s. ``api_key``: default ``NM_API_KEY``; the key names the
    workspace. ``timeout``: seconds per attempt (or an ``httpx.Timeout``).
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        url, headers = _connection(base_url, api_key)
        self.base_url = url
        self.retry = retry or RetryPolicy()
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout, transport=transport)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def search(
        self,
        query: str,
        *,
        top_k: int | None = None,
        filters: SearchFilters | Mapping[str, Any] | None = None,
        mode: SearchMode | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> SearchResponse:
        """``POST /v1/search``: the best observations for ``query``. ``filters`` and ``options``
        (any other field of the request: ``rerank``, ``explain``, ``excludeSessionId``…) use the
        API's camelCase names (docs/api.md)."""
        call = _asking("v1/search", "query", query, {"topK": top_k, "filters": filters, "mode": mode}, options)
        return self._send(call, SearchResponse)

    def answer(
        self,
        question: str,
        *,
        top_k: int | None = None,
        filters: SearchFilters | Mapping[str, Any] | None = None,
        mode: SearchMode | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> AnswerResponse:
        """``POST /v1/answer``: an answer grounded in the workspace's observations, with citations."""
        call = _asking("v1/answer", "question", question, {"topK": top_k, "filters": filters, "mode": mode}, options)
        return self._send(call, AnswerResponse)

    def add(
        self, observations: Sequence[ObservationIn | Mapping[str, Any]], *, batch_size: int = MAX_BATCH
    ) -> ObservationsResponse:
        """``POST /v1/observations`` in batches of ``batch_size``: add or update (idempotent by id,
        so a retried or repeated call updates in place). One reply for all batches: ids in input
        order, counts summed, ``requestId`` lists each batch's. A batch's error is raised after
        the batches before it were stored; sending them all again is harmless."""
        return _merged([self._send(call, ObservationsResponse) for call in _batches(observations, batch_size)])

    def get(self, observation_id: str) -> ObservationOut:
        """``GET /v1/observations/{id}``: one observation in full, or ``NotFound``."""
        return self._send(_observation("GET", observation_id), ObservationOut)

    def delete(self, observation_id: str) -> DeleteResponse:
        """``DELETE /v1/observations/{id}``: the observation and its chunks, or ``NotFound``."""
        return self._send(_observation("DELETE", observation_id), DeleteResponse)

    def facets(
        self,
        *,
        source_types: Sequence[str] | None = None,
        observation_types: Sequence[str] | None = None,
        actor_names: Sequence[str] | None = None,
        tiers: Sequence[str] | None = None,
        start: datetime | str | None = None,
        end: datetime | str | None = None,
        limit: int | None = None,
    ) -> FacetsResponse:
        """``GET /v1/facets``: how many observations hold each source, type, actor and tier (each
        field counted under the other filters given), and how many match them all."""
        call = _facets(source_types, observation_types, actor_names, tiers, start, end, limit)
        return self._send(call, FacetsResponse)

    def _send(self, call: _Call, model: type[Reply]) -> Reply:
        attempt = 0
        while True:
            try:
                response = self._http.request(call.method, call.path, json=call.body, params=call.params)
            except httpx.TransportError as exc:  # timeouts included
                raise TransportFailed(f"{call.method} {self.base_url}{call.path}: {exc!r}") from exc
            delay = None if call.method in _NOT_RETRIED else self.retry.delay(response, attempt)
            if delay is None:
                return _parsed(response, model)
            time.sleep(delay)
            attempt += 1


class AsyncNeuralMemoryClient:
    """The same API as ``NeuralMemoryClient``, with ``async`` methods (one httpx.AsyncClient)."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        url, headers = _connection(base_url, api_key)
        self.base_url = url
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(base_url=url, headers=headers, timeout=timeout, transport=transport)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def search(
        self,
        query: str,
        *,
        top_k: int | None = None,
        filters: SearchFilters | Mapping[str, Any] | None = None,
        mode: SearchMode | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> SearchResponse:
        """``POST /v1/search`` (see ``NeuralMemoryClient.search``)."""
        call = _asking("v1/search", "query", query, {"topK": top_k, "filters": filters, "mode": mode}, options)
        return await self._send(call, SearchResponse)

    async def answer(
        self,
        question: str,
        *,
        top_k: int | None = None,
        filters: SearchFilters | Mapping[str, Any] | None = None,
        mode: SearchMode | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> AnswerResponse:
        """``POST /v1/answer`` (see ``NeuralMemoryClient.answer``)."""
        call = _asking("v1/answer", "question", question, {"topK": top_k, "filters": filters, "mode": mode}, options)
        return await self._send(call, AnswerResponse)

    async def add(
        self, observations: Sequence[ObservationIn | Mapping[str, Any]], *, batch_size: int = MAX_BATCH
    ) -> ObservationsResponse:
        """``POST /v1/observations`` in batches (see ``NeuralMemoryClient.add``)."""
        return _merged([await self._send(call, ObservationsResponse) for call in _batches(observations, batch_size)])

    async def get(self, observation_id: str) -> ObservationOut:
        """``GET /v1/observations/{id}``, or ``NotFound``."""
        return await self._send(_observation("GET", observation_id), ObservationOut)

    async def delete(self, observation_id: str) -> DeleteResponse:
        """``DELETE /v1/observations/{id}``, or ``NotFound``."""
        return await self._send(_observation("DELETE", observation_id), DeleteResponse)

    async def facets(
        self,
        *,
        source_types: Sequence[str] | None = None,
        observation_types: Sequence[str] | None = None,
        actor_names: Sequence[str] | None = None,
        tiers: Sequence[str] | None = None,
        start: datetime | str | None = None,
        end: datetime | str | None = None,
        limit: int | None = None,
    ) -> FacetsResponse:
        """``GET /v1/facets`` (see ``NeuralMemoryClient.facets``)."""
        call = _facets(source_types, observation_types, actor_names, tiers, start, end, limit)
        return await self._send(call, FacetsResponse)

    async def _send(self, call: _Call, model: type[Reply]) -> Reply:
        attempt = 0
        while True:
            try:
                response = await self._http.request(call.method, call.path, json=call.body, params=call.params)
            except httpx.TransportError as exc:
                raise TransportFailed(f"{call.method} {self.base_url}{call.path}: {exc!r}") from exc
            delay = None if call.method in _NOT_RETRIED else self.retry.delay(response, attempt)
            if delay is None:
                return _parsed(response, model)
            await anyio.sleep(delay)
            attempt += 1
