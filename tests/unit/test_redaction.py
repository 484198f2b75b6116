"""Redaction of an observation before it is kept: every scanned field, the placeholders and what is
recorded, idempotence, ``<private>`` spans, the refuse policy, and look-alikes left alone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from neural_memory.models import CodeRef, ObservationIn
from neural_memory.redaction.detectors import find_secrets
from neural_memory.redaction.observations import SecretRefused, redact, redact_all, redact_text

from bench.secrets_corpus import SECRET_KINDS, non_secrets, secrets

GHP = "ghp_" + "Zq7Rk2Lm9Xc4Vb1Nn8Aa3Ss6Dd0Ff5Gg2Hh7"
AWS_ID = "AKIAQ3RT7WZX7K2M4PL9"
AWS_SECRET = "tK9mQ2vR7xW4zP1nL8bC5fH3jD6gS0aE2yU9iO4r"
DB_URL = "postgres://app:Pr0d!Passw0rd@db.internal:5432/app"


def note(**fields: object) -> ObservationIn:
    base: dict[str, object] = {
        "id": "n1",
        "source": "manual",
        "observationType": "note",
        "occurredAt": datetime(2026, 1, 5, tzinfo=UTC),
        "content": "nothing to see",
    }
    return ObservationIn.model_validate(base | fields)


def test_a_secret_in_every_scanned_field_becomes_a_typed_placeholder_and_is_recorded_by_kind_and_field() -> None:
    observation = note(
        title=f"Rotate {GHP}",
        content=f"aws_access_key_id={AWS_ID}\naws_secret_access_key={AWS_SECRET}\nDATABASE_URL={DB_URL}",
        url=f"https://ci.example.com/build?token={GHP}",
        metadata={"env": {"password": "hunter2-Prod"}, "tags": [f"key {AWS_ID}"], "count": 3},
        codeRefs=[{"repository": "acme/api", "paths": [f"src/{GHP}.py", "src/app.py"]}],
    )
    result = redact(observation)
    kept = result.observation
    assert kept.title == "Rotate [redacted:github-token]"
    assert AWS_ID not in kept.content and AWS_SECRET not in kept.content and "Pr0d!Passw0rd" not in kept.content
    assert "[redacted:aws-access-key-id]" in kept.content
    assert "[redacted:aws-secret-access-key]" in kept.content
    assert "postgres://app:[redacted:url-password]@db.internal" in kept.content
    assert kept.url == "https://ci.example.com/build?token=[redacted:github-token]"
    assert kept.metadata == {
        "env": {"password": "[redacted:credential]"},
        "tags": ["key [redacted:aws-access-key-id]"],
        "count": 3,
    }
    assert kept.code_refs == [CodeRef(repository="acme/api", paths=["src/[redacted:github-token].py", "src/app.py"])]
    assert set(result.redactions) == {
        "title:github-token",
        "content:aws-access-key-id",
        "content:aws-secret-access-key",
        "content:url-password",
        "url:github-token",
        "metadata.env.password:credential",
        "metadata.tags:aws-access-key-id",
        "codeRefs:github-token",
    }
    text = kept.model_dump_json() + repr(result.redactions)
    for secret in (GHP, AWS_ID, AWS_SECRET, "Pr0d!Passw0rd", "hunter2-Prod"):
        assert secret not in text


def test_redacting_twice_changes_nothing_more() -> None:
    once = redact(note(content=f"token {GHP} and {DB_URL}", metadata={"api_key": "Zx81-kkQ-Lm20-pW"})).observation
    twice = redact(once)
    assert twice.redactions == ()
    assert twice.observation == once


def test_a_private_span_is_never_kept_and_an_unclosed_one_runs_to_the_end() -> None:
    text, kinds = redact_text("keep this <private>my home address is 1 Main St</private> and this <PRIVATE>rest")
    assert text == "keep this [redacted:private] and this [redacted:private]"
    assert kinds == ["private", "private"]


def test_the_server_reads_a_private_span_as_the_hook_does_and_marks_it_alike() -> None:
    from neural_memory.local.agents.private_spans import strip_private
    from neural_memory.redaction.observations import placeholder
    from neural_memory.redaction.private import PRIVATE_PLACEHOLDER

    # Spaces inside the tags, any case: what an agent other than the hook may send the API
    sent = "deploy key is < Private >hunter2-on-the-bastion</ private > for now"
    text, kinds = redact_text(sent)
    assert text == strip_private(sent) == "deploy key is [redacted:private] for now" and kinds == ["private"]
    assert placeholder("private") == PRIVATE_PLACEHOLDER


def test_a_clean_observation_is_returned_as_it_came() -> None:
    observation = note(content="Deploy with blue-green switches; commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3.")
    result = redact(observation)
    assert result.redactions == ()
    assert result.observation is observation


def test_the_refuse_policy_names_the_field_and_kind_and_never_the_value() -> None:
    batch = [note(id="a"), note(id="b", metadata={"db": DB_URL})]
    with pytest.raises(SecretRefused) as refused:
        redact_all(batch, "refuse")
    assert refused.value.field == "observations.1.metadata.db"
    assert refused.value.kind == "url-password"
    assert "Pr0d!Passw0rd" not in str(refused.value)
    assert [r.redactions for r in redact_all(batch, "redact")] == [(), ("metadata.db:url-password",)]


def test_a_repository_holding_a_secret_drops_its_code_ref() -> None:
    observation = note(codeRefs=[{"repository": f"acme/{AWS_ID}", "paths": ["a.py"]}])
    result = redact(observation)
    assert result.observation.code_refs is None
    assert result.redactions == ("codeRefs:aws-access-key-id",)


@pytest.mark.parametrize("kind", SECRET_KINDS)
def test_every_kind_of_the_labelled_set_is_found_whole(kind: str) -> None:
    for item in (s for s in secrets(seed=7, per_kind=5) if s.kind == kind):
        redacted, kinds = redact_text(item.text)
        assert kinds, item.text
        for secret in item.secrets:
            assert secret not in redacted, item.text


def test_look_alikes_are_left_alone() -> None:
    found = [(item.text, find_secrets(item.text)) for item in non_secrets(seed=9, count=400)]
    assert [(text, f) for text, f in found if f] == []


@pytest.mark.parametrize(
    "text",
    [
        # Seen in the real histories of two secret scanners (docs/benchmarks.md, issue 44)
        "- SecretsCollection: output_baseline saner function structure",
        "Example account SID: ACxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx Regex: AC[a-z0-9]{32}",
        "PGP keys are missed, since they start with `BEGIN PGP PRIVATE KEY BLOCK` and the BLOCK never matched",
        # and in werkzeug's, httpx's and gitleaks' (their words about passwords and tokens)
        "Push to main: Improved documentation for password functions.",
        "Handle URL quoting username and password components. (#1159)",
        "* applied new copy_with with username and password\n\n* Changed code: authority",
        "Only detects: \nAWS STS service bearer token\nContext-specific credential",
        "- [audit functionality] Clarify what a valid secret is (0a840b2)",
    ],
)
def test_what_real_histories_say_about_secrets_is_not_one(text: str) -> None:
    assert find_secrets(text) == []


def test_an_arn_is_not_a_telegram_token() -> None:
    # The sample SQS event's queue ARN: an account id, a colon and a 35-character name
    assert find_secrets("arn:aws:sqs:us-east-1:123456789012:NeuralMemory-dev-IngestObservations") == []
