"""The base of every wire model: camelCase on the wire, unknown fields rejected, and what clients
send accepted only under its documented names (docs/api.md, docs/openapi.json).

Wire models forbid unknown fields, bound every string and list, and require timezone-aware
dates, so bad input is a 400 naming the field, never a 500."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """Base of every request and response model: camelCase aliases, unknown fields rejected."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class RequestModel(WireModel):
    """Base of what clients send: only the documented camelCase names (``topK``, never ``top_k``).
    Code builds these with ``model_validate`` and the same names."""

    model_config = ConfigDict(validate_by_name=False, validate_by_alias=True)
