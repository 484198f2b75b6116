"""The stored fields of an observation, derived from ``ObservationRecord`` (the one declaration).

Each store renders its schema, its documents and its record reader from ``RECORD_FIELDS``, so a
field added to the model reaches every store, and a field of a type no store knows fails here,
at import, naming the field.
"""

from __future__ import annotations

import json
import types
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Union, get_args, get_origin

from neural_memory.clock import from_iso, from_ms, to_iso, to_ms
from neural_memory.models import Indexing, ObservationRecord

Kind = Literal["keyword", "keywords", "text", "stored", "time", "json", "integer", "float", "boolean"]


@dataclass(frozen=True)
class RecordField:
    """One stored field: its name, what kind of value it holds, and whether it may be null."""

    name: str
    kind: Kind
    nullable: bool

    def to_sqlite(self, value: Any) -> Any:
        """The column value (times as epoch ms, JSON as compact text)."""
        if value is None:
            return None
        if self.kind == "time":
            return to_ms(value)
        if self.kind in ("json", "keywords"):
            return json.dumps(value, separators=(",", ":"))
        return value

    def from_sqlite(self, value: Any) -> Any:
        """The record value of a column value (a column added later reads as the field's default)."""
        if value is None:
            return None if self.nullable else _default(self.name)
        if self.kind == "time":
            return from_ms(value)
        if self.kind in ("json", "keywords"):
            return json.loads(value)
        if self.kind == "boolean":
            return bool(value)
        return value

    def to_document(self, value: Any) -> Any:
        """The OpenSearch document value (times as ISO-8601)."""
        return to_iso(value) if self.kind == "time" and value is not None else value

    def from_document(self, value: Any) -> Any:
        """The record value of a document value."""
        if value is None:
            return None if self.nullable else _default(self.name)
        return from_iso(value) if self.kind == "time" else value


def _default(name: str) -> Any:
    info = ObservationRecord.model_fields[name]
    return info.get_default(call_default_factory=True)


def _kind(name: str, annotation: Any, metadata: list[Any]) -> tuple[Kind, bool]:
    nullable = False
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        nullable = len(members) < len(get_args(annotation))
        if len(members) != 1:
            raise TypeError(f"ObservationRecord.{name}: stores cannot keep a union of {members}")
        annotation = members[0]
    origin = get_origin(annotation)
    indexing = next((m.mode for m in metadata if isinstance(m, Indexing)), "exact")
    if annotation is str or origin is Literal:
        text_kinds: dict[str, Kind] = {"exact": "keyword", "text": "text", "stored": "stored"}
        return text_kinds[indexing], nullable
    simple: dict[Any, Kind] = {datetime: "time", int: "integer", float: "float", bool: "boolean"}
    if annotation in simple:
        return simple[annotation], nullable
    if origin is list and get_args(annotation) == (str,):
        return "keywords", nullable  # exact values, each searchable (a JSON array in SQLite)
    if origin in (dict, list):
        return "json", nullable
    raise TypeError(f"ObservationRecord.{name}: no store knows how to keep a {annotation!r}; add it to record_fields")


def _derive() -> tuple[RecordField, ...]:
    fields = []
    for name, info in ObservationRecord.model_fields.items():
        kind, nullable = _kind(name, info.annotation, info.metadata)
        fields.append(RecordField(name, kind, nullable))
    return tuple(fields)


RECORD_FIELDS: tuple[RecordField, ...] = _derive()
FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in RECORD_FIELDS)
