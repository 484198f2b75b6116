"""Records as chunk documents and back: one document per chunk, ``_id`` =
``{workspace}:{observation id}:{chunk}`` (a retried or replayed write overwrites in place), each
carrying its record's fields and chunk 0 the full text too (``mapping.DOC_NAMES`` renames a few)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neural_memory.domain.filters import metadata_terms
from neural_memory.domain.record_rules import touches_code
from neural_memory.models import ObservationRecord
from neural_memory.stores.base import check_patched
from neural_memory.stores.opensearch.mapping import DOC_NAMES
from neural_memory.stores.record_fields import RECORD_FIELDS

if TYPE_CHECKING:
    from collections.abc import Mapping

    from neural_memory.stores.base import IndexedObservation


def doc_id(workspace_id: str, observation_id: str, chunk_no: int) -> str:
    """The deterministic document id of one chunk."""
    return f"{workspace_id}:{observation_id}:{chunk_no}"


def document(workspace_id: str, item: IndexedObservation, chunk_no: int) -> dict[str, Any]:
    """The document of one chunk of ``item``: its record's fields (the full ``content`` on
    chunk 0 only), its text if searched by keyword, its terms and its vector."""
    rec, chunk = item.record, item.chunks[chunk_no]
    doc: dict[str, Any] = {
        DOC_NAMES.get(f.name, f.name): f.to_document(getattr(rec, f.name))
        for f in RECORD_FIELDS
        if getattr(rec, f.name) is not None and (f.name != "content" or chunk_no == 0)
    }
    doc |= {"workspace_id": workspace_id, "chunk_no": chunk_no}
    # A passage is searched through its vector only: without a text field its words count in
    # no statistic of BM25's text field (the embedded store gives it no FTS5 row). Its title,
    # a record field, is still indexed, so title statistics count passages too. No new field
    # marks it: an index of the same schema (written to until a reindex swaps) takes it as is.
    if chunk.lexical:
        doc["text"] = chunk.text
    if terms := metadata_terms(rec.metadata, rec.code_refs, suffixes=touches_code(rec)):
        doc["metadata_terms"] = terms
    if chunk.vector is not None:
        doc["embedding"] = chunk.vector
        doc["model_id"] = item.model_id
        if chunk.embedding_hash is not None:
            doc["embedding_hash"] = chunk.embedding_hash
    return doc


def observation_of(document_id: str, workspace_id: str) -> str:
    """The observation id of a chunk's document id (``doc_id``; an observation id has no colon
    at its end, but may hold colons: cut the workspace prefix and the chunk number suffix)."""
    return document_id[len(workspace_id) + 1 :].rsplit(":", 1)[0]


def record_of(source: dict[str, Any], content: str) -> ObservationRecord:
    """The record of a chunk document, with the observation's full ``content`` read from chunk 0."""
    values = {f.name: f.from_document(source.get(DOC_NAMES.get(f.name, f.name))) for f in RECORD_FIELDS}
    return ObservationRecord(**{**values, "content": content})


def patch_doc(fields: Mapping[str, object]) -> dict[str, Any]:
    """The partial document setting ``fields`` (``PATCHED_FIELDS``; None clears one)."""
    check_patched(fields)
    return {DOC_NAMES.get(f.name, f.name): f.to_document(fields[f.name]) for f in RECORD_FIELDS if f.name in fields}
