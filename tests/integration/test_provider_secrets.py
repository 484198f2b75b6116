"""Provider keys in Secrets Manager (moto): read only when a provider is first used, and a secret
that cannot be read degrades that provider with the reason; it never fails the request."""

from __future__ import annotations

from typing import TYPE_CHECKING

import boto3
import pytest
from moto import mock_aws
from neural_memory.errors import ConfigurationError, SecretUnavailable
from neural_memory.models import AnswerRequest
from neural_memory.providers.secrets import forget_secrets
from neural_memory.runtime import build_service
from neural_memory.settings import Settings

from tests.helpers.pipeline import DEPLOY_NOTES, request

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = [pytest.mark.integration, pytest.mark.aws]
MISSING = "arn:aws:secretsmanager:us-east-1:123456789012:secret:nowhere-AbCdEf"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    forget_secrets()
    with mock_aws():
        yield
    forget_secrets()


def test_a_secret_is_read_as_a_plain_string_or_the_api_key_field(aws: None) -> None:
    client = boto3.client("secretsmanager")
    plain = client.create_secret(Name="plain", SecretString="co-123")["ARN"]
    wrapped = client.create_secret(Name="json", SecretString='{"apiKey": "sk-456"}')["ARN"]
    assert Settings(cohere_secret_arn=plain).cohere_key() == "co-123"
    assert Settings(anthropic_secret_arn=wrapped).anthropic_key() == "sk-456"


def test_an_unreadable_secret_names_the_aws_error_and_is_tried_again_next_time(aws: None) -> None:
    with pytest.raises(SecretUnavailable, match="ResourceNotFoundException") as raised:
        Settings(cohere_secret_arn=MISSING).cohere_key()
    assert isinstance(raised.value, ConfigurationError)
    # Once the secret exists (the operator fixed it), the same container reads it
    client = boto3.client("secretsmanager")
    arn = client.create_secret(Name="late", SecretString="co-late")["ARN"]
    assert Settings(cohere_secret_arn=arn).cohere_key() == "co-late"


def test_building_the_service_reads_no_secret(aws: None, tmp_path: Path) -> None:
    # Given both provider secrets unreadable, When the service is built (as every function does
    # on its first request), Then nothing fails: only a function that uses a provider reads its key
    settings = Settings(data_dir=tmp_path, embedder="cohere", cohere_secret_arn=MISSING, anthropic_secret_arn=MISSING)
    service = build_service(settings)
    assert service.store.count("acme") == 0


def test_search_and_answers_degrade_with_the_reason_when_secrets_cannot_be_read(aws: None, tmp_path: Path) -> None:
    # Given a local embedder for the data, and a Cohere reranker and an Anthropic gate and answerer
    # whose secrets cannot be read
    settings = Settings(data_dir=tmp_path, cohere_secret_arn=MISSING, anthropic_secret_arn=MISSING)
    service = build_service(settings)
    service.index("acme", DEPLOY_NOTES)
    # When searching with the gate (topK 10: more than 5 could be returned, so it runs) and the balanced rerank
    reply = service.search("acme", request(rerank="balanced"), "r1")
    # Then the results come, the gate was bypassed with an error, and the rerank degraded with the reason
    assert reply.results and reply.llm.bypassed and reply.llm.reason == "error"
    assert any(entry.startswith("rerank:balanced->fast") for entry in reply.degraded)
    # And an answer falls back to the extractive one, saying why
    answer = service.answer("acme", AnswerRequest.model_validate({"question": "why did the deploy fail"}), "r2")
    assert answer.method == "extractive" and answer.citations
    assert any("ResourceNotFoundException" in entry for entry in answer.degraded)


def test_an_unreadable_embedding_key_degrades_search_to_keywords(aws: None, tmp_path: Path) -> None:
    # Given Cohere embeddings whose secret cannot be read, and an E-tier push (never embedded)
    from neural_memory.models import ObservationIn

    settings = Settings(data_dir=tmp_path, embedder="cohere", cohere_secret_arn=MISSING)
    service = build_service(settings)
    push = ObservationIn.model_validate(
        {
            "source": "github",
            "observationType": "push",
            "occurredAt": "2025-12-14T10:00:00Z",
            "title": "Push to main: fix deploy env",
            "content": "1 commit pushed to main",
        }
    )
    service.index("acme", [push])
    # When searching in hybrid mode, Then lexical answers and the reason is in degraded
    reply = service.search("acme", request("deploy env"), "r1")
    assert [r.title for r in reply.results] == ["Push to main: fix deploy env"]
    assert any("ResourceNotFoundException" in entry and entry.startswith("vector:skipped") for entry in reply.degraded)


def test_a_webhook_secret_set_or_rotated_after_first_use_is_read_again(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from neural_memory.providers import secrets

    # Given a webhook secret a container has already read (CDK fills a new secret with a random value)
    client = boto3.client("secretsmanager")
    arn = client.create_secret(Name="github-webhook", SecretString="random-by-cdk")["ARN"]
    settings = Settings(github_webhook_secret_arn=arn)
    assert settings.webhook_secrets("github") == {"*": "random-by-cdk"}
    # When the operator sets it, Then a normal read keeps the container's value, a fresh one sees the new
    client.put_secret_value(SecretId=arn, SecretString='{"github:acme/console": "s-acme"}')
    assert settings.webhook_secrets("github") == {"*": "random-by-cdk"}
    monkeypatch.setattr(secrets, "REFETCH_AFTER_S", 0.0)
    assert settings.webhook_secrets("github", fresh=True) == {"github:acme/console": "s-acme"}
