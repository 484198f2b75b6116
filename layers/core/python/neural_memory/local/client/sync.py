"""The API over HTTP, synchronously (``NeuralMemoryClient``). ``aio.py`` is made from this file
(``make_async.py``): edit this one."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Self

import httpx

from neural_memory.models import (
    AnswerResponse,
    DeleteResponse,
    ExpertsResponse,
    FacetsResponse,
    LineageResponse,
    ObservationOut,
    ObservationsResponse,
    SearchResponse,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime
    from types import TracebackType

    from neural_memory.models import ObservationIn, SearchFilters, SearchMode

from neural_memory.local.client.errors import TransportFailed
from neural_memory.local.client.requests import (
    DEFAULT_TIMEOUT_S,
    MAX_BATCH,
    NOT_RETRIED,
    Call,
    Reply,
    RetryPolicy,
    asking,
    batches,
    connection,
    facets_call,
    merged,
    operation_call,
    parsed,
)
from neural_memory.operations import BY_NAME

__all__ = [
    "NeuralMemoryClient",
]


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
        url, headers = connection(base_url, api_key)
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
        call = asking("search", "query", query, {"topK": top_k, "filters": filters, "mode": mode}, options)
        return self.send(call, SearchResponse)

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
        call = asking("answer", "question", question, {"topK": top_k, "filters": filters, "mode": mode}, options)
        return self.send(call, AnswerResponse)

    def experts(
        self,
        query: str,
        *,
        top_k: int | None = None,
        filters: SearchFilters | Mapping[str, Any] | None = None,
        mode: SearchMode | None = None,
        evidence: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> ExpertsResponse:
        """``POST /v1/experts``: who knows about ``query``, the actors best first, each with their
        counts per observation type and best evidence ids (at most ``top_k`` actors, ``evidence``
        ids each); ``options``: any other field of the request (``includeBots``, ``explain``…)."""
        fields = {"topK": top_k, "filters": filters, "mode": mode, "evidence": evidence}
        return self.send(asking("experts", "query", query, fields, options), ExpertsResponse)

    def add(
        self, observations: Sequence[ObservationIn | Mapping[str, Any]], *, batch_size: int = MAX_BATCH
    ) -> ObservationsResponse:
        """``POST /v1/observations`` in batches of ``batch_size``: add or update (idempotent by id,
        so a retried or repeated call updates in place). One reply for all batches: ids in input
        order, counts summed, ``requestId`` lists each batch's. A batch's error is raised after
        the batches before it were stored; sending them all again is harmless."""
        return merged([self.send(call, ObservationsResponse) for call in batches(observations, batch_size)])

    def get(self, observation_id: str) -> ObservationOut:
        """``GET /v1/observations/{id}``: one observation in full, or ``NotFound``."""
        return self.send(operation_call(BY_NAME["get"], observation_id), ObservationOut)

    def lineage(self, observation_id: str, *, limit: int | None = None) -> LineageResponse:
        """``GET /v1/observations/{id}/lineage``: why the observation changed, oldest first (its
        supersession chain and the observations sharing a commit, pull request, issue or
        deployment with it; at most ``limit`` of those), or ``NotFound``."""
        params = None if limit is None else {"limit": limit}
        return self.send(operation_call(BY_NAME["lineage"], observation_id, params), LineageResponse)

    def delete(self, observation_id: str) -> DeleteResponse:
        """``DELETE /v1/observations/{id}``: the observation and its chunks, or ``NotFound``."""
        return self.send(operation_call(BY_NAME["delete"], observation_id), DeleteResponse)

    def promote(self, observation_id: str, reason: str) -> ObservationOut:
        """``POST /v1/observations/{id}/promote``: a C observation kept for good (tier A, no
        expiry), with ``reason`` and the key recorded on it; ``NotFound``, or ``Conflict`` when it
        is not a live C observation."""
        return self.send(operation_call(BY_NAME["promote"], observation_id, body={"reason": reason}), ObservationOut)

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
        call = facets_call(source_types, observation_types, actor_names, tiers, start, end, limit)
        return self.send(call, FacetsResponse)

    def send(self, call: Call, model: type[Reply]) -> Reply:
        """Any API call (``requests.operation_call``), its reply parsed into ``model``; retried as
        every method is."""
        attempt = 0
        while True:
            try:
                response = self._http.request(call.method, call.path, json=call.body, params=call.params)
            except httpx.TransportError as exc:  # timeouts included
                raise TransportFailed(f"{call.method} {self.base_url}{call.path}: {exc!r}") from exc
            delay = None if call.method in NOT_RETRIED else self.retry.delay(response, attempt)
            if delay is None:
                return parsed(response, model)
            time.sleep(delay)
            attempt += 1
