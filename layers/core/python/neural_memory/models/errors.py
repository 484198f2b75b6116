"""The shape of every non-2xx reply (``api/resolver.py`` writes it; the domain errors themselves are
``neural_memory.errors``)."""

from __future__ import annotations

from pydantic import Field

from neural_memory.models.wire import WireModel


class ErrorDetail(WireModel):
    """One problem with the request; ``field`` is the dotted path of the offending field."""

    field: str
    message: str
    type: str


class ErrorBody(WireModel):
    """The error itself."""

    code: str
    message: str
    details: list[ErrorDetail] = Field(default_factory=list)


class ErrorResponse(WireModel):
    """Every non-2xx reply has this shape."""

    error: ErrorBody
    request_id: str
