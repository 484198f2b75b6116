"""Issue 56: the shapes the detector missed (a token glued to a word, percent-encoded text, a random
value assigned to any name, upper-case random values, a PEM block split across lines), the
look-alikes it must leave alone, and secrets in identifiers (replaced by a stable derived id, or
refused naming the field)."""

from __future__ import annotations

from datetime import UTC, datetime
from random import Random

import pytest
from neural_memory.api.routes import route_template
from neural_memory.models import ObservationIn
from neural_memory.redaction.detectors import find_secrets
from neural_memory.redaction.identifiers import stored_id
from neural_memory.redaction.observations import SecretRefused, redact, redact_all, redact_text

from bench.secrets_blind import covered
from bench.secrets_evasions import EVASIONS, LOOKALIKES, evasion_samples, lookalike_samples

ANT = "sk-ant-api03-" + "Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0Xc2Vb4Nm6Qw8Er0Ty2Ui4Op6As8Df0Gh2Jk4" + "Lz6Xc8Vb0Nm2Qw4Er6AA"
PROJ = "sk-proj-" + "Zx9Cv8Bn7Mq6Wr5Et4Yu3Io2Pa1Sd0Fg9Hj8Kl7Zx6Cv5Bn4Mq3Wr2Et1Yu0Io" + "Pa9Sd8Fg7Hj6Kl5Zx4"
AKIA = "AKIAQ3RT7WZX7K2M4PL5"
GHP = "ghp_" + "Zq7Rk2Lm9Xc4Vb1Nn8Aa3Ss6Dd0Ff5Gg2Hh7"
XOXB = "xoxb-123456789012-1234567890123-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7"
LIVE = "sk_live_51" + "Hx7Qm2Zr9Lk4Vt8Wn3Bc6Yp1Df5Gs0Ja2Ke4Mu6Nq8Ro0St2Uv4Wx6Yz8Ab0Cd2"
RANDOM_40 = "tK9mQ2vR7xW4zP1nL8bC5fH3jD6gS0aE2yU9iO4r"


def note(**fields: object) -> ObservationIn:
    base: dict[str, object] = {
        "id": "n1",
        "source": "manual",
        "observationType": "note",
        "occurredAt": datetime(2026, 1, 5, tzinfo=UTC),
        "content": "nothing to see",
    }
    return ObservationIn.model_validate(base | fields)


def gone(text: str, *secrets: str) -> bool:
    """Nothing of the secrets survives redaction: not even 12 characters in a row of one."""
    redacted, _ = redact_text(text)
    return not any(secret[n : n + 12] in redacted for secret in secrets for n in range(len(secret) - 11))


@pytest.mark.parametrize(
    "text",
    [
        f"git add deploy/OPENAI_key_is_{PROJ}.txt",
        f"x{AKIA}",
        f"MY_KEY{LIVE}",
        f"src/config/old_{ANT}_backup.json",
        f"611{AKIA}_old",
        f"session sess_{ANT}",
    ],
)
def test_a_token_glued_to_a_word_is_found_whole(text: str) -> None:
    token = next(t for t in (PROJ, AKIA, LIVE, ANT, XOXB) if t in text)
    assert gone(text, token), redact_text(text)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("GET /v1/experts?q=postgres%3A%2F%2Fsvc%3AHx7Qm2Zr9Lk4Vt8W%40db.internal%3A5432%2Fapp", "Hx7Qm2Zr9Lk4Vt8W"),
        (f"aws_secret_access_key%20%3D%20{RANDOM_40[:20]}%2F{RANDOM_40[21:]}", RANDOM_40[:20]),
        (f"q=api_key%253D{RANDOM_40}", RANDOM_40),
        (f"/v1/facets?q=token%3A%20{ANT}", ANT),
    ],
)
def test_a_percent_encoded_secret_is_found_in_its_encoded_form(text: str, secret: str) -> None:
    redacted, kinds = redact_text(text)
    assert kinds, text
    assert secret not in redacted
    assert "%3A%2F%2Fsvc%3A[redacted:" in redacted or "[redacted:" in redacted


@pytest.mark.parametrize(
    "text",
    [
        f"BILLING_CRED={RANDOM_40}",
        f'{{"hmacMaterial": "{RANDOM_40}"}}',
        f"env:\n  LEDGER_SIGNER: {RANDOM_40}\n",
        f"docker run -e ROUTER_SEAL={RANDOM_40} ghcr.io/acme/payouts:1.4.2",
    ],
)
def test_a_random_value_assigned_to_any_name_is_found(text: str) -> None:
    assert gone(text, RANDOM_40), redact_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "MY_SERVICE_API_KEY=RUAXTEI7S4QPDPYP5EGTMY5BLJ0D1QYFG0UND11K",
        "  partner_api_key: Z8IKO7R3FFAS36WBQP8PWR99T18K7CSV",
        "  payments_token: TCTLJATRYOWQCTUTUFVOPRNHJMFDDYIRWUPKLTIG",
    ],
)
def test_an_upper_case_random_value_assigned_to_a_secret_name_is_found(text: str) -> None:
    value = text.rsplit(maxsplit=1)[-1].rsplit("=", maxsplit=1)[-1]
    assert gone(text, value), redact_text(text)


BODY = "MIIEpAIBAAKCAQEA8Xp5EMAw0t39M+FEOt5vJoWiZzSyKyHZmIyRjYdznCJOyeaH"


@pytest.mark.parametrize(
    "block",
    [
        f"-----BEGIN RSA\nPRIVATE KEY-----\n{BODY}\n-----END RSA PRIVATE KEY-----",
        f"-----BEGIN OPENSSH\nPRIVATE KEY-----\n{BODY}\n-----END OPENSSH PRIVATE KEY-----",
        f"# -----BEGIN EC PRIVATE\n# KEY-----\n# {BODY}\n# -----END EC PRIVATE KEY-----",
    ],
)
def test_a_pem_block_split_across_lines_is_found(block: str) -> None:
    assert gone(f"key:\n{block}\n", BODY)


def test_the_evasion_set_is_found_and_its_look_alikes_left_alone() -> None:
    rng = Random(56)
    evasions, lookalikes = evasion_samples(rng), lookalike_samples(rng)
    found = sum(
        all(covered([(f.start, f.end) for f in find_secrets(s.text)], x.start, x.end) for x in s.secrets)
        for s in evasions
    )
    assert found / len(evasions) >= 0.95, found
    touched = [s.text for s in lookalikes if find_secrets(s.text)]
    assert len(touched) <= len(lookalikes) / 1000, touched
    assert {s.category for s in evasions} == set(EVASIONS)
    assert {s.category for s in lookalikes} == set(LOOKALIKES)


@pytest.mark.parametrize(
    "text",
    [
        "COMMIT_SHA=3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a",
        "REQUEST_ID=5f0c2a4e-1b2c-4d3e-8f9a-0b1c2d3e4f5a",
        "TRACE_ID=01HF8ZQ3K4M5N6P7R8S9T0VWXY",
        "integrity: sha512-Zq7Rk2Lm9Xc4Vb1Nn8Aa3Ss6Dd0Ff5Gg2Hh7Zq7Rk2Lm9Xc4Vb1Nn8Aa3Ss6Dd0Ff5Gg2Hh7==",
        "IMAGE_DIGEST=sha256:3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a3f9a8b7c6d5e4f3a2b1c0d9e",
        "LOGO_PNG=iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "tasks/mask_live_previewThumbnailGenerator.py",
        "MY_SERVICE_API_KEY=REPLACE_ME_WITH_YOUR_KEY",
        "redirect_uri=https%3A%2F%2Fapp.example.com%2Fcallback%3Fstate%3Dabc",
    ],
)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert find_secrets(text) == [], text


def test_a_secret_in_an_identifier_becomes_a_stable_derived_one_and_is_recorded() -> None:
    observation = note(
        id=f"deploy-{GHP}",
        actorName=f"bot {AKIA}",
        sessionId=f"sess_{XOXB}",
        parentId=f"p-{GHP}",
        supersedes=[f"old-{GHP}"],
        source=f"src-{GHP}",
    )
    result = redact(observation)
    kept = result.observation
    flat = repr(kept.model_dump())
    assert not any(secret in flat for secret in (GHP, AKIA, XOXB))
    assert kept.id == stored_id(f"deploy-{GHP}") == redact(observation).observation.id  # stable
    assert kept.id.startswith("deploy-redacted-github-token-")
    assert kept.parent_id == stored_id(f"p-{GHP}")
    assert {r.split(":")[0] for r in result.redactions} >= {"id", "actorName", "sessionId", "parentId", "supersedes"}
    assert stored_id(f"deploy-{GHP}") != stored_id(f"deploy-{GHP[:-1]}8")  # different secrets, different ids
    assert stored_id("note-plain-1") == "note-plain-1"


def test_a_free_text_identifier_is_read_whole_not_only_for_tokens() -> None:
    kept = redact(note(sessionId="deploy postgres://app:Qx7!pass99@db.internal/app")).observation
    assert kept.session_id is not None
    assert "Qx7!pass99" not in kept.session_id
    assert "redacted-url-password-" in kept.session_id


def test_a_refusing_workspace_names_the_identifier_that_holds_a_secret() -> None:
    with pytest.raises(SecretRefused) as refused:
        redact_all([note(), note(id="n2", actorName=GHP)], "refuse")
    assert refused.value.field == "observations.1.actorName"


@pytest.mark.parametrize(
    ("target", "logged"),
    [
        (f"/v1/experts?q=deploy%20creds%3A%20{AKIA}", "/v1/experts"),
        (f"/v1/facets?q={AKIA}", "/v1/facets"),
        (f"/v1/observations/{GHP}", "/v1/observations/{id}"),
        (f"/v1/observations/{GHP}/lineage?limit=5", "/v1/observations/{id}/lineage"),
        (f"/nowhere/{GHP}", "(no route)"),
        ("/health", "/health"),
    ],
)
def test_the_access_log_names_the_route_template_never_the_target(target: str, logged: str) -> None:
    assert route_template(target) == logged
