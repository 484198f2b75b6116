"""API keys: one workspace per key, stored hashed, checked in constant time.

A key reads ``nm_<key id>_<secret>``. The key id (public, 12 hex chars) finds the record; the
secret (256 random bits) is compared as a sha256 digest with ``hmac.compare_digest``. A slow
password hash is unnecessary: the secret is random and long, not chosen by a person.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from neural_memory.auth.base import KeyRecord
from neural_memory.auth.roles import LEGACY_ROLE, Role, check_name
from neural_memory.errors import Unauthorized
from neural_memory.observability import logger

if TYPE_CHECKING:
    from collections.abc import Mapping

    from neural_memory.auth.base import KeyStore

_KEY = re.compile(r"^nm_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
API_KEY_HEADER = "Authorization"
WORKSPACE_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def issue_key(
    store: KeyStore, workspace_id: str, now: datetime, *, name: str | None = None, role: Role = LEGACY_ROLE
) -> str:
    """Create a key for ``workspace_id`` and return it; only its digest is stored. ``name`` (who
    acts with it: the workspace's own name when not given) and ``role`` (``auth/roles.py``)."""
    return issue(store, workspace_id, now, name=name, role=role)[0]


def issue(
    store: KeyStore, workspace_id: str, now: datetime, *, name: str | None = None, role: Role = LEGACY_ROLE
) -> tuple[str, KeyRecord]:
    """``issue_key``, with the record stored (for the audit trail)."""
    if not WORKSPACE_PATTERN.match(workspace_id):
        raise ValueError("workspace must be 1..64 letters, digits, '.', '_' or '-', starting with a letter or digit")
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    record = KeyRecord(
        key_id=key_id,
        workspace_id=workspace_id,
        secret_sha256=_digest(secret),
        created_at=now,
        name=check_name(name if name is not None else workspace_id),
        role=role,
    )
    store.put_key(record)
    return f"nm_{key_id}_{secret}", record


# ``last used`` is kept to this precision: a key's record is written at most once per period and
# process, so a request does not pay a write (``keys list`` says "last used" to the minute).
LAST_USED_EVERY = timedelta(minutes=5)
# What the authorizer's update of a key's last use names (its grant allows these attributes only).
KEY_TOUCHED_ATTRIBUTES = ("key_id", "last_used_at")
_touched: dict[str, datetime] = {}
_touched_lock = threading.Lock()


def note_use(store: KeyStore, record: KeyRecord, now: datetime) -> None:
    """Record that ``record``'s key was used at ``now``, unless this process did within
    ``LAST_USED_EVERY`` (a failure is logged: it never refuses the request)."""
    with _touched_lock:
        last = _touched.get(record.key_id) or record.last_used_at
        if last is not None and now - last < LAST_USED_EVERY:
            return
        _touched[record.key_id] = now
    try:
        store.touch_key(record.key_id, now)
    except Exception:
        logger.warning("could not record the key's last use", extra={"keyId": record.key_id})


def authenticate(store: KeyStore, presented: str | None) -> str:
    """The workspace of a valid, unrevoked key; ``Unauthorized`` otherwise (same message for every case)."""
    return identify(store, presented).workspace_id


def identify(store: KeyStore, presented: str | None) -> KeyRecord:
    """The record of a valid, unrevoked key (its id names who acts, its workspace where);
    ``Unauthorized`` otherwise (same message for every case)."""
    match = _KEY.match(presented or "")
    record = store.find_key(match.group(1)) if match else None
    # Compare even when the id is unknown, so timing does not tell ids apart.
    expected = record.secret_sha256 if record else _digest("")
    supplied = _digest(match.group(2)) if match else _digest("x")
    if not hmac.compare_digest(expected, supplied) or record is None or record.revoked_at is not None:
        raise Unauthorized("missing or invalid API key")
    return record


def revoke(store: KeyStore, presented: str, now: datetime) -> bool:
    """Revoke a key (identified by the key itself); False if it is unknown."""
    return revoked(store, presented, now) is not None


def revoked(store: KeyStore, presented: str, now: datetime) -> KeyRecord | None:
    """Revoke a key (the key itself, or its 12-hex id as ``keys list`` shows it); its record, or
    None if it is unknown or already revoked."""
    match = _KEY.match(presented)
    key_id = match.group(1) if match else presented if re.fullmatch(r"[0-9a-f]{12}", presented) else None
    if key_id is None or (record := store.find_key(key_id)) is None:
        return None
    if match is not None and not hmac.compare_digest(record.secret_sha256, _digest(match.group(2))):
        return None
    return record if store.revoke_key(key_id, now) else None


def extract_api_key(headers: Mapping[str, str] | None) -> str | None:
    """The key from ``Authorization: Bearer <key>`` (header name case-insensitive). The only way to
    present a key: on AWS this header is the authorizer's cache key (its identity source), so a
    second way would be refused there while working locally."""
    if not headers:
        return None
    lowered = {name.lower(): value for name, value in headers.items() if isinstance(value, str)}
    scheme, _, token = lowered.get(API_KEY_HEADER.lower(), "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return None


# What a refused request is told, the same words locally and on AWS (where API Gateway answers a
# request without the header itself, and the authorizer's Deny carries the other two to the
# ACCESS_DENIED gateway response): plain text, no quote or backslash, so a gateway response
# template can put them inside a JSON string as they are.
NO_KEY = f"no API key: send the header '{API_KEY_HEADER}: Bearer <key>'"
NOT_BEARER = f"the {API_KEY_HEADER} header must read 'Bearer <key>' (the word Bearer, a space, then the key)"
INVALID_KEY = "unknown or revoked API key: check it for typos, or create one with neural-memory keys create"


def key_problem(headers: Mapping[str, str] | None) -> str:
    """What is wrong with the key a refused request presented, from the request alone: none at all,
    a header without the ``Bearer`` scheme (a bare key, or ``Token …``), or a key that is not a
    valid one (unknown, mistyped or revoked: never which, so keys cannot be probed)."""
    lowered = {name.lower(): value for name, value in (headers or {}).items() if isinstance(value, str)}
    value = lowered.get(API_KEY_HEADER.lower(), "").strip()
    if not value:
        return NO_KEY
    if extract_api_key(headers) is None:
        return NOT_BEARER
    return INVALID_KEY
