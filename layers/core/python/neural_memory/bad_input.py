"""How bad input is worded, for HTTP and MCP tools alike: pydantic's errors as the field that failed
and its message (``validation_failure``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.errors import InvalidInput
from neural_memory.models import ErrorDetail

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def _field(loc: Sequence[Any], located: bool) -> str:
    parts = [str(p) for p in loc]
    if located and parts and parts[0] in {"body", "path", "query", "header"}:
        parts = parts[1:]
    if parts and parts[0].isdigit():  # position of a JSON syntax error, not a field
        parts = []
    return ".".join(parts) or "body"


def validation_failure(
    errors: Sequence[Mapping[str, Any]], *, located: bool = True
) -> tuple[InvalidInput, list[ErrorDetail]]:
    """Pydantic's errors as the API words them: the first field and its message (with how many
    more), and every one in ``details``. The one wording of bad input, for HTTP and MCP tools.
    ``located``: each error's path starts with where the request carried it (HTTP: ``body``,
    ``query``...), left out of the field's name; an MCP tool's arguments have no such part (an
    argument may be called ``query``)."""
    details = [
        ErrorDetail(
            field=_field(error.get("loc", ()), located),
            message=("malformed JSON: " + str(error.get("ctx", {}).get("error", "")))
            if error.get("type") == "json_invalid"
            else str(error.get("msg", "invalid value")),
            type=str(error.get("type", "value_error")),
        )
        for error in errors
    ]
    first = details[0] if details else ErrorDetail(field="body", message="invalid request", type="value_error")
    more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
    return InvalidInput(first.field, first.message + more), details
