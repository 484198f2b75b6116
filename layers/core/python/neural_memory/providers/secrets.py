"""Provider API keys and webhook secrets from AWS Secrets Manager, read on first use (boto3 loads
then, not at import) and kept by the container."""

from __future__ import annotations

import json
import time

from neural_memory.errors import SecretUnavailable


def read_secret(arn: str) -> str:
    """The secret's string value (a plain string, or the ``apiKey`` field of a JSON secret).

    Raises ``SecretUnavailable`` naming the AWS error (e.g. ``AccessDeniedException``); a failure
    is not kept, so the next use tries again (after a grant is fixed, say).
    """
    value = fetch_secret(arn)
    if value.startswith("{"):
        return str(json.loads(value).get("apiKey", ""))
    return value


_fetched: dict[str, tuple[float, str]] = {}
REFETCH_AFTER_S = 10.0  # a forced re-read happens at most this often per secret


def fetch_secret(arn: str, fresh: bool = False) -> str:
    """The secret's raw string, kept by the container; ``fresh`` reads it again (at most every
    ``REFETCH_AFTER_S``), for a secret that may have been set or rotated since (webhooks)."""
    cached = _fetched.get(arn)
    if cached and not (fresh and time.monotonic() - cached[0] >= REFETCH_AFTER_S):
        return cached[1]
    value = _get_secret_string(arn)
    _fetched[arn] = (time.monotonic(), value)
    return value


def forget_secrets() -> None:
    """Drop every kept value (tests that change secrets between cases)."""
    _fetched.clear()


def _get_secret_string(arn: str) -> str:
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        value = str(boto3.client("secretsmanager").get_secret_value(SecretId=arn)["SecretString"])
    except ClientError as exc:
        error = exc.response.get("Error", {})
        detail = " ".join(str(error.get("Message", "")).split())[:300]
        reason = f"{error.get('Code', 'ClientError')}" + (f" ({detail})" if detail else "")
        raise SecretUnavailable(f"secret {arn} cannot be read: {reason}") from exc
    except BotoCoreError as exc:
        raise SecretUnavailable(f"secret {arn} cannot be read: {type(exc).__name__}") from exc
    return value
