"""``neural-memory`` as a user runs it, but embedding with the hashing test embedder: a stand-in
for "model A" and "model B" in tests at the process boundary (a model change is a change of
``model_id`` and dimension; the product never imports this).

``python -m tests.helpers.hash_cli DIMENSION [SECONDS] -- ARGS``: ``neural-memory ARGS`` with
``HashEmbedder(DIMENSION)`` (model ``test-hash-DIMENSION``), each ``embed`` call taking at least
``SECONDS`` (so a reindex lasts long enough to be searched and written beside, or killed)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from tests.helpers.fakes import HashEmbedder

if TYPE_CHECKING:
    from collections.abc import Sequence

    from neural_memory.models import Vector
    from neural_memory.providers.embeddings.base import InputType
    from neural_memory.settings import Settings


class SlowHashEmbedder(HashEmbedder):
    """``HashEmbedder`` whose document batches take at least ``delay_s`` (queries do not wait)."""

    def __init__(self, dimension: int, delay_s: float = 0.0) -> None:
        super().__init__(dimension)
        self._delay_s = delay_s

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[Vector]:
        if input_type == "search_document":
            time.sleep(self._delay_s)
        return super().embed(texts, input_type)


def command(dimension: int, delay_s: float = 0.0) -> list[str]:
    """The argv prefix that runs ``neural-memory`` with this embedder."""
    return [sys.executable, "-m", "tests.helpers.hash_cli", str(dimension), str(delay_s), "--"]


def main(argv: Sequence[str]) -> int:
    dimension, delay_s, separator, *args = argv
    assert separator == "--", "usage: hash_cli DIMENSION SECONDS -- ARGS"
    from neural_memory.local.cli import main as cli_main
    from neural_memory.providers import embeddings

    def build_embedder(settings: Settings) -> SlowHashEmbedder | None:
        return None if settings.embedder == "none" else SlowHashEmbedder(int(dimension), float(delay_s))

    embeddings.build_embedder = build_embedder
    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
