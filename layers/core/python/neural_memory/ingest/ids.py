"""Deterministic ids, so the same source event always lands on the same record."""

from __future__ import annotations

import hashlib
import re

_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$")


def derived_id(*parts: object) -> str:
    """``obs_`` + 32 hex chars of sha256 over the parts (None counts as empty)."""
    joined = "\x1f".join("" if part is None else str(part) for part in parts)
    return "obs_" + hashlib.sha256(joined.encode()).hexdigest()[:32]


def content_hash(*parts: object) -> str:
    """sha256 hex over the parts; equal hashes mean nothing that is indexed has changed."""
    joined = "\x1f".join("" if part is None else str(part) for part in parts)
    return hashlib.sha256(joined.encode()).hexdigest()


def source_id(prefix: str, raw: object) -> str:
    """``prefix-raw`` when the source's own id is safe as an observation id, else ``prefix-`` and a
    hash of it: still deterministic, so replays of the same event land on the same record."""
    candidate = f"{prefix}-{raw}"
    return candidate if _SAFE.match(candidate) else f"{prefix}-{hashlib.sha256(str(raw).encode()).hexdigest()[:32]}"
