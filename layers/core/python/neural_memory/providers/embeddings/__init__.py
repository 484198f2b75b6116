"""Embedders, chosen by settings in one factory and imported only when chosen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neural_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from neural_memory.providers.embeddings.base import Embedder
    from neural_memory.settings import Settings


def build_embedder(settings: Settings) -> Embedder | None:
    """The embedder named by ``settings.embedder`` (None for ``none``: keyword search only)."""
    if settings.embedder == "none":
        return None
    if settings.embedder == "onnx":
        from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

        return OnnxLocalEmbedder(
            documents_yield_to_queries=settings.documents_yield_to_queries,
            model=settings.local_model,
            data_dir=settings.data_dir,
        )
    if settings.embedder == "cohere":
        from neural_memory.providers.embeddings.cohere import CohereEmbedder

        return CohereEmbedder(
            api_key=settings.cohere_key, model=settings.cohere_embed_model, timeout_s=settings.cohere_timeout_s
        )
    raise ConfigurationError(f"unknown embedder {settings.embedder!r}")
