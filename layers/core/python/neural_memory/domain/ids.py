"""Deterministic ids, so the same source event always lands on the same record."""

from __future__ import annotations

import hashlib
import re

_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$")
# What varies between occurrences of the same event: addresses, hex ids and numbers (ids, times,
# counts, durations). Masked, so "build 4121 failed after 312 s" recurs as "build 4122 failed
# after 298 s" does.
_VARYING = re.compile(
    r"https?://\S+|\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b|\b[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b|\d+"
)


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


def recurrence_key(title: str, content: str) -> str:
    """What makes two execution observations "the same content" (``ingest/lifecycle.py``): the
    content (the title when there is none), lower-cased, with URLs, hex ids and numbers masked and
    whitespace collapsed; 32 hex chars of sha256 over that."""
    text = (content.strip() or title).lower()
    masked = " ".join(_VARYING.sub("#", text).split())
    return hashlib.sha256(masked.encode()).hexdigest()[:32]


def text_key(text: str) -> str:
    """The key of a text in ``VectorCache.get_many``'s reply."""
    return hashlib.sha256(text.encode()).hexdigest()


def embedding_hash(model_id: str, text: str) -> str:
    """What a stored vector is found by: the embedded text and the model that embedded it
    (sha256 hex; the unit separator keeps ``model`` + ``text`` pairs apart)."""
    return hashlib.sha256(f"{model_id}\x1f{text}".encode()).hexdigest()
