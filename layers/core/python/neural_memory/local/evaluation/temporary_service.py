"""The service an evaluation runs on: a temporary store, the configured providers, and the
embedding cache of the user's data folder (a second run of a dataset embeds nothing again)."""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from neural_memory.clock import utcnow

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from datetime import datetime

    from neural_memory.service import Service
    from neural_memory.settings import Settings


@contextmanager
def evaluation_service(settings: Settings, clock: Callable[[], datetime] = utcnow) -> Iterator[Service]:
    """A service over a fresh temporary data folder, closed before the folder is removed (never
    delete SQLite's files under an open connection); ``clock`` is the data's own "now" if dated."""
    from neural_memory.runtime import build_service

    with tempfile.TemporaryDirectory(prefix="nm-eval-") as tmp:
        service = build_service(settings.model_copy(update={"data_dir": Path(tmp)}), clock=clock)
        try:
            if settings.store == "sqlite" and service.embedding_cache is not None:
                from neural_memory.providers.embeddings.cache import EmbeddingCache

                service.embedding_cache.close()  # the temporary folder's: unused
                service.embedding_cache = EmbeddingCache(settings.embedding_cache_path)
            yield service
        finally:
            service.close()
