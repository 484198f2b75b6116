"""A random value assigned to any name (``BILLING_CRED=…``, ``"hmacMaterial": "…"``, ``relay_seal:
…``): a secret when its name says nothing else about it and the value is random the way issued keys
are, in code, config and env-file syntax.

Random, measured against what engineering text assigns in the same shapes (``bench/secrets_evasions.py``
look-alikes, the blind set's non-secrets, real histories; docs/benchmarks.md): 32 characters or
more of base62 or base64 holding lower case, upper case and a digit (a commit SHA, a hex digest, a
UUID, a ULID never do), at least 4.2 bits of entropy a character (32 random base62 characters have
about 4.6; English and identifiers less), no word-like run of nine lower-case letters (a path, a
camel-case name). Not a secret: a value whose name says what it is (an id, a hash, a digest, an
image, a fixture, …), a digest (``sha512-…``), and base64 that decodes to a file's magic bytes (an
image) or to text with spaces (a fixture).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING

from neural_memory.redaction import values

if TYPE_CHECKING:
    from collections.abc import Iterator

MIN_LENGTH = 32
MIN_ENTROPY = 4.2  # bits a character
# A run of base62/base64(url) characters standing alone (not inside a longer token or a URL's path).
_VALUE = re.compile(r"(?<![A-Za-z0-9+/_.:-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/=_.:-])", re.ASCII)
# What must stand right before the value: a name of three characters or more (``n``, ``e`` of a
# public JWK say nothing) and an assignment (``=``, ``:``, ``:=``, ``=>``), the name quoted or not,
# the value's opening quote; not a URL's query parameter (``&fbclid=…``: a tracking id; a
# secret-named one is the ``url-token`` pattern's).
_ASSIGNED = re.compile(r"(?<![\w.?&-])([A-Za-z_][\w.-]{2,80}?)[\"']?[ \t]*(?::=|=>|=|:)[ \t]*[\"'`]?$", re.ASCII)
_WORDY = re.compile(r"[a-z]{9}")
# A digest inside a name-like value (``Linux-pnpm-store-<sha256>``, a cache key): hex between separators.
_HEX_PART = re.compile(r"(?:^|[-_])[0-9a-f]{16,}(?:$|[-_])")
# Names that say what a non-secret value is.
_DESCRIBED = re.compile(
    r"(?:^|[_.-])(?:ids?|kid|uuid|guid|ulid|ksuid|commit|revision|rev|sha\d*|checksum|etag|integrity|digest|hash|nonce|"
    r"salt|iv|image|img|logo|icon|avatar|thumbnail|png|jpe?g|gif|svg|webp|pdf|b64|base64|fixture|sample|"
    r"example|payload|body|cache|build|snapshot|cursor|state|signature|fingerprint|public|pub|publishable|"
    r"cert|certificate|font|woff2?|data)s?(?:$|[_.-])",
    re.IGNORECASE,
)
# Magic bytes of files that travel as base64 (an image, a PDF, an archive, a font).
_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF", b"%PDF", b"\x1f\x8b", b"PK\x03\x04", b"wOF", b"<svg", b"<?xml")


def _decodes_to_content(value: str) -> bool:
    """Base64 of a file (its magic bytes) or of text with spaces: content, not a key."""
    try:
        raw = base64.b64decode(
            value + "=" * (-len(value) % 4), altchars=b"-_" if "-" in value or "_" in value else None
        )
    except (binascii.Error, ValueError):
        return False
    if raw.startswith(_MAGIC):
        return True
    try:
        decoded = raw.decode()
    except UnicodeDecodeError:
        return False
    return decoded.isprintable() and " " in decoded


def random_value(value: str) -> bool:
    """Whether ``value`` is random the way an issued key is (the module's rule)."""
    if len(value) < MIN_LENGTH or _WORDY.search(value) or _HEX_PART.search(value):
        return False
    if not (any(c.islower() for c in value) and any(c.isupper() for c in value) and any(c.isdigit() for c in value)):
        return False
    if values.entropy(value.rstrip("=")) < MIN_ENTROPY or values.placeholder(value) or values.reference(value, True):
        return False
    return not _decodes_to_content(value)


def _name_says_not_secret(name: str) -> bool:
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return bool(_DESCRIBED.search(name)) or values.about_a_secret(name)


def assigned_random(text: str) -> Iterator[tuple[int, int]]:
    """Where a random value assigned to a name stands in ``text`` (start, end)."""
    for match in _VALUE.finditer(text):
        start, end = match.span()
        if not text[max(0, start - 90) : start].rstrip(" \t\"'`").endswith(("=", ":", "=>")):
            continue  # no assignment right before it (a string operation: the cheapest test first)
        if not random_value(match.group(0)):
            continue
        before = _ASSIGNED.search(text, max(0, start - 90), start)
        if before is not None and not _name_says_not_secret(before.group(1)):
            yield start, end
