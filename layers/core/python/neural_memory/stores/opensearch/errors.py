"""OpenSearch error replies translated into the domain's errors."""

from __future__ import annotations

from neural_memory.errors import BackendUnavailable, ConfigurationError, NeuralMemoryError, StoreRejected

RETRYABLE = {429, 500, 502, 503, 504}
WRITE_BLOCKED = "cluster_block_exception"


class RequestTooLarge(StoreRejected):
    """The domain refused a request for its size (413): split it, or refuse the one document."""


def domain_error(status: object, info: object, index: str) -> NeuralMemoryError:
    """The domain error for an OpenSearch error reply: retryable statuses are ``BackendUnavailable``;
    a refused identity or a missing index is configuration (no record can succeed until it is
    fixed); 413 is ``RequestTooLarge``; any other refusal is ``StoreRejected`` with the reason."""
    error = info.get("error") if isinstance(info, dict) else info
    reason = str(error.get("reason") or error.get("type")) if isinstance(error, dict) else str(error or info)
    if isinstance(info, dict) and "Message" in info:  # the AWS front end's own refusals
        reason = str(info["Message"])
    if status in RETRYABLE or WRITE_BLOCKED in str(info):
        return BackendUnavailable(f"OpenSearch answered {status}: {reason}")
    if status == 413:
        return RequestTooLarge(f"OpenSearch refused a request as too large (413): {reason}")
    if status in (401, 403):
        return ConfigurationError(
            f"OpenSearch refused this role ({status}: {reason}); "
            "check the domain's access policy and the role's es:ESHttp* grant"
        )
    if status == 404 and "index_not_found" in str(info):
        return ConfigurationError(f"index {index!r} does not exist; the maintenance function's bootstrap creates it")
    return StoreRejected(f"OpenSearch answered {status}: {reason}")
