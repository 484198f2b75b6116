"""Protocol-level test doubles (never used by the product)."""

from __future__ import annotations

import hashlib
import math
import re
from typing import TYPE_CHECKING

from neural_memory.errors import BackendUnavailable

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Vector
    from neural_memory.providers.embeddings.base import InputType


class HashEmbedder:
    """Bag-of-words hashed into a unit vector: texts sharing words are similar. A test double only."""

    def __init__(self, dimension: int = 64) -> None:
        self.calls: list[tuple[list[str], InputType]] = []
        self._dimension = dimension

    @property
    def model_id(self) -> str:
        return f"test-hash-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[Vector]:
        self.calls.append((list(texts), input_type))
        out = []
        for text in texts:
            vector = [0.0] * self._dimension
            for word in re.findall(r"\w+", text.lower()):
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self._dimension] += 1.0
            norm = math.sqrt(sum(x * x for x in vector)) or 1.0
            out.append([x / norm for x in vector])
        return out


class FailingEmbedder(HashEmbedder):
    """Raises ``BackendUnavailable`` on every call, like a provider in an outage."""

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[Vector]:
        raise BackendUnavailable("embedding provider is down")
