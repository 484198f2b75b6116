"""Secrets out of identifiers (an observation's ``id``, ``parentId``, ``supersedes``,
``sessionId``, ``actorName``, ``source``, ``sourceType``, ``observationType``): each secret in one
is replaced by ``redacted-<kind>-<digest>``, the digest the first 12 hex characters of the secret's
SHA-256. The result is still a valid identifier (letters, digits, ``-``), the same for the same
secret (a redelivery updates in place, a session's turns stay one session, links keep pointing at
it) and different for different ones, and holds nothing of the secret a reader could use: 48 bits
of a hash of a random token (a weak password in an id could be guessed against them: ids are not
where passwords go).

``stored_id`` is the function ``GET``/``DELETE``/promote/lineage apply to the id they are asked
for, so the original id (secret and all) still reaches its observation.
"""

from __future__ import annotations

import hashlib

from neural_memory.redaction.detectors import find_secrets


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()[:12]


def redact_identifier(value: str) -> tuple[str, list[str]]:
    """``value`` with each secret replaced by ``redacted-<kind>-<digest>``, and the kinds found."""
    findings = find_secrets(value)
    if not findings:
        return value, []
    pieces: list[str] = []
    at = 0
    for finding in findings:
        pieces += [value[at : finding.start], f"redacted-{finding.kind}-{_digest(value[finding.start : finding.end])}"]
        at = finding.end
    pieces.append(value[at:])
    return "".join(pieces), [f.kind for f in findings]


def stored_id(observation_id: str) -> str:
    """The id an observation sent as ``observation_id`` is stored under."""
    return redact_identifier(observation_id)[0]
