"""Provider API keys from AWS Secrets Manager, read once per container (boto3 loads on first use)."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=8)
def read_secret(arn: str) -> str:
    """The secret's string value (a plain string, or the ``apiKey`` field of a JSON secret)."""
    import json  # noqa: PLC0415

    import boto3  # noqa: PLC0415

    value = str(boto3.client("secretsmanager").get_secret_value(SecretId=arn)["SecretString"])
    if value.startswith("{"):
        return str(json.loads(value).get("apiKey", ""))
    return value
