"""Deterministic ids, so the same source event always lands on the same record."""

from __future__ import annotations

import hashlib


def derived_id(*parts: object) -> str:
    """``obs_`` + 32 hex chars of sha256 over the parts (None counts as empty)."""
    joined = "\x1f".join("" if part is None else str(part) for part in parts)
    return "obs_" + hashlib.sha256(joined.encode()).hexdigest()[:32]


def content_hash(*parts: object) -> str:
    """sha256 hex over the parts; equal hashes mean nothing that is indexed has changed."""
    joined = "\x1f".join("" if part is None else str(part) for part in parts)
    return hashlib.sha256(joined.encode()).hexdigest()
