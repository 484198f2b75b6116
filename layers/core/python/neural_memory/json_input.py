"""JSON from outside (an HTTP body, a bus record, a file, an MCP message), parsed within limits.

Python's ``json`` fails on such input in ways no caller expects from "bad JSON": an integer of more
than 4,300 digits raises a bare ``ValueError`` (the interpreter's guard against quadratic
conversion), deep nesting a ``RecursionError``, and a lone surrogate parses but breaks every later
encode. ``parse`` turns each of them into one ``JsonRefused`` with the reason, so every edge
refuses the one document (400, a failed record, a failure line) instead of crashing.
"""

from __future__ import annotations

import json
from typing import Any

# Nesting deeper than this is refused (no payload we read nests half as deep).
MAX_JSON_DEPTH = 32
# Integers longer than this are refused: Python's own conversion limit, so nothing that parsed
# before is refused now (no field we read is exact beyond 2^53, 16 digits, anyway).
MAX_INTEGER_DIGITS = 4300


class JsonRefused(ValueError):
    """The text is not JSON we accept; ``where`` is the dotted path of the offending value ("body"
    for the document as a whole)."""

    def __init__(self, where: str, reason: str, *, syntax: bool = False) -> None:
        super().__init__(f"{where}: {reason}" if where != "body" else reason)
        self.where = where
        self.reason = reason
        self.syntax = syntax  # not JSON at all (rather than JSON over a limit)


class _TooManyDigits(ValueError):
    pass


def _integer(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _TooManyDigits
    return int(digits)


def parse(text: str | bytes) -> Any:
    """The document of ``text``; ``JsonRefused`` when it is not JSON, or holds an integer of more
    than ``MAX_INTEGER_DIGITS`` digits, nesting deeper than ``MAX_JSON_DEPTH``, or a string or key
    that is not valid Unicode (a lone surrogate)."""
    try:
        document = json.loads(text, parse_int=_integer)
    except _TooManyDigits:
        raise JsonRefused("body", f"an integer has more than {MAX_INTEGER_DIGITS} digits") from None
    except RecursionError:
        raise JsonRefused("body", f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise JsonRefused("body", f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", syntax=True) from None
    except (ValueError, UnicodeDecodeError) as exc:  # bytes that are not UTF-8, and the like
        raise JsonRefused("body", f"not JSON text: {exc}", syntax=True) from None
    check(document)
    return document


def check(document: Any) -> None:
    """``JsonRefused`` when an already decoded document nests deeper than ``MAX_JSON_DEPTH`` or
    holds a string or key that is not valid Unicode. Iterative: any depth is walked safely."""
    pending: list[tuple[Any, tuple[str, ...]]] = [(document, ())]
    while pending:
        value, path = pending.pop()
        if len(path) > MAX_JSON_DEPTH:
            raise JsonRefused(".".join(path[:3]) + "...", f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                if not _is_text(key):
                    raise JsonRefused(".".join(path) or "body", "a key is not valid Unicode text (lone surrogate)")
                pending.append((item, (*path, key)))
        elif isinstance(value, list):
            pending.extend((item, (*path, str(n))) for n, item in enumerate(value))
        elif isinstance(value, str) and not _is_text(value):
            raise JsonRefused(".".join(path) or "body", "not valid Unicode text (lone surrogate)")


def _is_text(value: object) -> bool:
    try:
        str(value).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
