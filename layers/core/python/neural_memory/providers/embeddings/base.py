"""The embedder protocol: texts in, L2-normalised vectors out (so cosine similarity is a dot product)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Vector

InputType = Literal["search_document", "search_query"]


class Embedder(Protocol):
    """Turns texts into unit-length vectors of ``dimension`` floats in the space named ``model_id``.

    Constructors do no I/O; models and clients load on the first ``embed`` call.
    """

    @property
    def model_id(self) -> str:
        """Names the vector space; vectors of different model ids are never compared."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        ...

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[Vector]:
        """One unit vector per text, in order. Raises ``BackendUnavailable`` when the provider is down."""
        ...
