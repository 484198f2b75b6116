"""Providers' tokens glued to a word: the provider patterns without their word boundaries
(``deploy/OPENAI_key_is_sk-proj-….txt``, ``x`` + ``AKIA…``, ``…_old`` after), each found token
checked to hold digits and letters (``values.glued_token``), so that a name that happens to hold a
prefix (``mask_live_previewGenerator``) is not taken."""

from __future__ import annotations

import re

from neural_memory.redaction import values
from neural_memory.redaction.patterns import PROVIDERS, Pattern

__all__ = ["GLUED"]


def _glued(pattern: Pattern) -> Pattern:
    """A provider's pattern without its word boundaries: its token glued to a word
    (``deploy/OPENAI_key_is_sk-proj-….txt``, ``x`` + ``ghp_…``, ``…_old``); the token must then
    hold digits and letters (``mask_live_previewGenerator`` is a name, not ``sk_live_…``)."""
    source = pattern.regex.pattern.removeprefix(r"\b")
    if source.endswith(r"\b"):
        source = source[:-2] + "(?![A-Za-z0-9])"
    source = source.replace(r"|\b", "|")
    return Pattern(pattern.kind, re.compile(source, pattern.regex.flags), hints=pattern.hints, check=values.glued_token)


GLUED = (
    # Not the ones whose only hint is punctuation (Discord's ``.``, Mailgun's ``-``): run on every
    # text without a boundary to start from, they would cost more than all the others together.
    *(_glued(p) for p in PROVIDERS if p.regex.pattern.startswith(r"\b") and not set(p.hints) <= {".", "-"}),
    # AWS key ids glued to anything before; after, no more of its alphabet.
    Pattern(
        "aws-access-key-id",
        re.compile(r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Z0-9])", re.ASCII),
        hints=("a3t", "abia", "acca", "akia", "asia"),
        check=values.glued_token,
    ),
)
