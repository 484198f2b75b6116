"""Bulk writes to OpenSearch: actions (whole documents, or some of their fields) by document id,
grouped into requests of at most a size, their item failures sorted into retried (throttled, a
brief write block, an index without a new field yet, a vector of another dimension mid-reindex)
and refused for good, conditional actions that lose their race told apart."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from neural_memory.errors import BackendUnavailable
from neural_memory.observability import logger
from neural_memory.stores.opensearch.errors import RETRYABLE, WRITE_BLOCKED, RequestTooLarge

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

_VERSION_CONFLICT = 409  # an ``if_seq_no``/``if_primary_term`` or ``create`` action lost its race
_VECTOR_DIMENSION_MISMATCH = "Vector dimension mismatch"  # the k-NN plugin's refusal of a vector
_UNKNOWN_FIELD = "strict_dynamic_mapping_exception"  # a field the index's strict mapping lacks


class Bulk:
    """The bulk writes of one store: ``call`` is its client call (errors made domain errors),
    ``refresh`` its refresh policy, ``max_bytes`` ``Settings.opensearch_bulk_max_bytes``."""

    def __init__(self, client: Any, call: Callable[..., Any], refresh: str, max_retries: int, max_bytes: int) -> None:
        self._client = client
        self._call = call
        self._refresh = refresh
        self._max_retries = max_retries
        self._bulk_max_bytes = max_bytes

    def __call__(
        self,
        index: str,
        actions: dict[str, dict[str, Any]],
        op: str = "index",
        conditions: Mapping[str, Mapping[str, Any]] | None = None,
        conflicts: set[str] | None = None,
    ) -> dict[str, str]:
        """In ``index``: ``index`` whole documents, or ``update`` some of their fields, by document id, in
        requests of at most ``bulk_max_bytes``; retryable item failures are retried with backoff.
        Returns the documents refused for good, with the reason. ``conditions`` (by document id)
        make an action conditional (``if_seq_no``/``if_primary_term``, or ``create``: only if
        absent); those that lose their race go to ``conflicts``, not the refused."""
        pending = dict(actions)
        refused: dict[str, str] = {}
        for attempt in range(self._max_retries + 1):
            retry: dict[str, dict[str, Any]] = {}
            for request in self._requests(index, pending, op, conditions or {}):
                self._send(index, request, pending, retry, refused, conflicts)
            pending = retry
            if not pending:
                return refused
            if attempt < self._max_retries:
                time.sleep(0.2 * 2**attempt)
        raise BackendUnavailable(f"OpenSearch kept refusing {len(pending)} documents (throttled or unavailable)")

    def _requests(
        self, index: str, actions: dict[str, dict[str, Any]], op: str, conditions: Mapping[str, Mapping[str, Any]]
    ) -> list[list[tuple[str, str]]]:
        """The actions as (document id, NDJSON lines), grouped into requests of at most
        ``bulk_max_bytes`` each (a larger single document makes a request of its own)."""
        requests: list[list[tuple[str, str]]] = [[]]
        size = 0
        for _id, doc in actions.items():
            condition = dict(conditions.get(_id, {}))
            action = "create" if condition.pop("create", False) else op
            lines = json.dumps({action: {"_index": index, "_id": _id, **condition}}) + "\n"
            lines += json.dumps(doc if op == "index" else {"doc": doc}) + "\n"
            if requests[-1] and size + len(lines) > self._bulk_max_bytes:
                requests.append([])
                size = 0
            requests[-1].append((_id, lines))
            size += len(lines)
        return [request for request in requests if request]

    def _send(
        self,
        index: str,
        request: list[tuple[str, str]],
        actions: dict[str, dict[str, Any]],
        retry: dict[str, dict[str, Any]],
        refused: dict[str, str],
        conflicts: set[str] | None = None,
    ) -> None:
        """One bulk request; its item failures sorted into ``retry`` and ``refused``. A request the
        domain finds too large (413) is split in two; a single document that is, is refused."""
        body = "".join(lines for _, lines in request)
        try:
            reply = self._call(self._client.bulk, index=index, body=body, refresh=self._refresh)
        except RequestTooLarge:
            if len(request) == 1:
                refused[request[0][0]] = f"{len(body)} bytes, over the domain's request size limit (413)"
                return
            half = len(request) // 2
            self._send(index, request[:half], actions, retry, refused, conflicts)
            self._send(index, request[half:], actions, retry, refused, conflicts)
            return
        if not reply.get("errors"):
            return
        for entry in reply["items"]:
            result = next(iter(entry.values()))
            status = int(result.get("status", 200))
            if status < 300:
                continue
            action = actions[result["_id"]]
            said = json.dumps(result.get("error"))
            if status == _VERSION_CONFLICT and conflicts is not None:
                conflicts.add(result["_id"])
            elif status in RETRYABLE or WRITE_BLOCKED in said:
                # A write block is brief: a reindex replacing an index made before versioning
                retry[result["_id"]] = action
            elif "embedding_hash" in action and _UNKNOWN_FIELD in said and "embedding_hash" in said:
                # An index created before the field, until the bootstrap adds it (``ensure_index``):
                # stored without it, so this vector is found by nothing and its text embedded again once.
                retry[result["_id"]] = {k: v for k, v in action.items() if k != "embedding_hash"}
            elif "embedding" in action and _VECTOR_DIMENSION_MISMATCH in said:
                # A writer already on a new model of another dimension, while the reindex for it
                # runs: stored without its vector for now; the reindex's catch-up embeds it anew.
                logger.warning(
                    "vector of another dimension than the live index: stored without it", extra={"id": result["_id"]}
                )
                retry[result["_id"]] = {
                    k: v for k, v in action.items() if k not in {"embedding", "model_id", "embedding_hash"}
                }
            else:
                error = result.get("error")
                reason = error.get("reason", status) if isinstance(error, dict) else error or status
                refused[result["_id"]] = f"{reason} ({status})"
