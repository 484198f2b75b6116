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
import re

from neural_memory.redaction.detectors import find_secrets


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()[:12]


# What an id or a slug (``[A-Za-z0-9_.:-]``: no URL, no escape, no assignment fits) holding a
# secret holds: a run of sixteen token characters or more with a letter past ``f`` in it (every
# provider's prefix has one: ``gh``, ``AKIA``, ``xox``, ``sk``). Most ids (UUIDs, commit SHAs,
# slugs) have none, and skip the detector. Free-text identifiers (an actor, a session id) are
# always read whole.
_TOKEN_RUN = re.compile(r"(?=[A-Za-z0-9+/=_-]{16})[A-Za-z0-9+/=_-]*[g-zG-Z][A-Za-z0-9+/=_-]*", re.ASCII)


def _may_hold_a_secret(value: str) -> bool:
    return any(len(run) >= 16 for run in _TOKEN_RUN.findall(value))


def redact_identifier(value: str, slug: bool = True) -> tuple[str, list[str]]:
    """``value`` with each secret replaced by ``redacted-<kind>-<digest>``, and the kinds found;
    ``slug``: an id or a slug (False: free text, always read whole)."""
    if slug and (len(value) < 16 or not _may_hold_a_secret(value)):
        return value, []
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
