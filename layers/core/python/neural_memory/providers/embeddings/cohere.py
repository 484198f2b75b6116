"""Cohere embeddings through the official SDK (v2 client), imported on first use."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from neural_memory.errors import BackendUnavailable, ConfigurationError
from neural_memory.providers.sdk_clients import ApiKey, lazy_cohere

if TYPE_CHECKING:
    from collections.abc import Sequence

    import httpx

    from neural_memory.models import Vector
    from neural_memory.providers.embeddings.base import InputType

BATCH_SIZE = 96  # the API's maximum texts per call
DIMENSIONS = {"embed-english-v3.0": 1024, "embed-multilingual-v3.0": 1024, "embed-v4.0": 1536}


class CohereEmbedder:
    """``search_document`` for what we index, ``search_query`` for what we look up."""

    def __init__(
        self,
        api_key: ApiKey,
        model: str = "embed-english-v3.0",
        timeout_s: float = 10.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        if model not in DIMENSIONS:
            raise ConfigurationError(f"unknown Cohere embedding model {model!r}; one of {sorted(DIMENSIONS)}")
        self._model = model
        self._client = lazy_cohere(api_key, timeout_s, http_client)

    @property
    def model_id(self) -> str:
        return f"cohere/{self._model}"

    @property
    def dimension(self) -> int:
        return DIMENSIONS[self._model]

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[Vector]:
        """Embed in batches of 96; any API or transport failure becomes ``BackendUnavailable``."""
        client = self._client.get()
        out: list[Vector] = []
        for start in range(0, len(texts), BATCH_SIZE):
            batch = list(texts[start : start + BATCH_SIZE])
            try:
                response = client.embed(
                    texts=batch, model=self._model, input_type=input_type, embedding_types=["float"]
                )
                vectors = response.embeddings.float_
            except Exception as exc:  # the SDK raises many types (ApiError, httpx errors, pydantic)
                raise BackendUnavailable(f"Cohere embed failed: {type(exc).__name__}") from exc
            if vectors is None or len(vectors) != len(batch):
                raise BackendUnavailable("Cohere embed returned a malformed reply")
            out.extend(_unit(vector) for vector in vectors)
        return out


def _unit(vector: Sequence[float]) -> Vector:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]
