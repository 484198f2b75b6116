"""What the service asks of a cache of document vectors, and the keys texts are found by (``domain.ids``).

Two implementations: the embedded store's SQLite file (``providers.embeddings.cache``) and, on
AWS, the OpenSearch index itself (``stores.opensearch.stored_vectors``), whose chunk documents
carry the ``domain.ids.embedding_hash`` of the text their vector was made from. Either way a text the
workspace already had embedded by the same model is never sent to the embedder again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Vector


class VectorCache(Protocol):
    """Document vectors by (model, workspace, text): per workspace, so how fast an ingest returns
    never tells one workspace whether another stored the same text."""

    def get_many(self, model_id: str, workspace_id: str, texts: Sequence[str]) -> dict[str, Vector]:
        """The vectors found, by ``text_key``, for the texts that have one."""
        ...

    def put_many(self, model_id: str, workspace_id: str, items: Sequence[tuple[str, Vector]]) -> None:
        """Remember freshly embedded vectors (a no-op where they are kept with what is stored)."""
        ...

    def close(self) -> None:
        """Release what the cache holds open."""
        ...
