"""Percent-encoded text read as it decodes (``postgres%3A%2F%2Fuser%3Apw%40…``,
``aws_secret_access_key%20%3D%20…``, twice encoded too): the detector runs on the decoded text and
each finding is mapped back to the characters of the text it came from, so the placeholder takes
the encoded secret whole."""

from __future__ import annotations

import re

# Encoded twice at most (``%253D``): a third layer is not something a URL or a log line carries.
_LAYERS = 2
_ESCAPE = re.compile(r"%([0-7][0-9A-Fa-f])")  # ASCII only: a secret's characters are


def encoded(text: str) -> bool:
    """Whether ``text`` holds a percent-escape of an ASCII character."""
    return "%" in text and _ESCAPE.search(text) is not None


def _decode_once(text: str, origin: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    for match in _ESCAPE.finditer(text):
        for n in range(at, match.start()):
            out.append(text[n])
            spans.append(origin[n])
        out.append(chr(int(match.group(1), 16)))
        spans.append((origin[match.start()][0], origin[match.end() - 1][1]))
        at = match.end()
    for n in range(at, len(text)):
        out.append(text[n])
        spans.append(origin[n])
    return "".join(out), spans


def decoded(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` percent-decoded (up to twice), and for each decoded character the span of ``text``
    it came from."""
    spans = [(n, n + 1) for n in range(len(text))]
    for _ in range(_LAYERS):
        if not encoded(text):
            break
        text, spans = _decode_once(text, spans)
    return text, spans
