"""Which embedding model a store's vectors are made by: the first write of vectors claims an
empty store for its model, and another model is refused (``StoreModelMismatch``, naming
``neural-memory reindex``) at a write, at a vector search and at start-up. The model itself is
recorded in the file's ``meta`` (``db.read_model``, ``db.write_model``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.stores.sqlite.db import Model, model_mismatch, read_model, write_model

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence
    from pathlib import Path

    from neural_memory.stores.base import IndexedObservation

__all__ = ["StoreModel"]


class StoreModel:
    """The model of the store at ``path``, checked on its connections."""

    def __init__(self, path: Path) -> None:
        self._path = path
        # (generation, the store's model, the model a reindex under way builds it for) as last read.
        self._known: tuple[int, Model | None, Model | None] | None = None

    def claim(self, conn: sqlite3.Connection, items: Sequence[IndexedObservation]) -> None:
        """Vectors are written only by the store's model (inside the write's transaction, so a
        reindex's swap cannot slip in between): the first model to write vectors into a store
        that has none becomes its model; another one is refused (``StoreModelMismatch``)."""
        written = {
            (item.model_id, len(chunk.vector))
            for item in items
            if item.model_id is not None
            for chunk in item.chunks
            if chunk.vector is not None
        }
        if not written:
            return
        built = read_model(conn)
        if built is None:
            write_model(conn, built := min(written))
        for model in written:
            if model != built:
                raise model_mismatch(self._path, built or model, model, read_model(conn, "reindex_"))

    def refuse_other(self, conn: sqlite3.Connection, generation: int, want: Model) -> None:
        """A vector search by another model than the store's is refused, naming the reindex (a
        store with no model yet has no vectors to compare: it answers with none). The store's
        model is read once per generation (a reindex's swap bumps it)."""
        known = self._known
        if known is None or known[0] != generation:
            known = self._known = (generation, read_model(conn), read_model(conn, "reindex_"))
        _, built, pending = known
        if built is not None and built != want:
            raise model_mismatch(self._path, built, want, pending)
