"""The evaluations' temporary service closes its files before its folder is deleted (SQLite's files
are never removed under an open connection) and keeps its embeddings in the user's data folder."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import pytest
from neural_memory.local.evaluation.temporary_service import evaluation_service
from neural_memory.models import ObservationIn, SearchRequest
from neural_memory.settings import Settings

from tests.helpers.events import NOW

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")


def _open_under(folder: Path) -> list[str]:
    """SQLite's files this process holds open under ``folder`` (a deleted one reads "... (deleted)")."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
        # The holders lock (not SQLite's: stores/sqlite/files.py) is the process's for its life, by design.
        if target.startswith(str(folder)) and ".holders" not in target:
            held.append(target)
    return held


def test_the_temporary_store_is_closed_before_its_folder_goes(tmp_path: Path) -> None:
    # Given an evaluation's service that stored and searched something
    settings = Settings(data_dir=tmp_path / "user-data")
    observation = ObservationIn.model_validate(
        {"source": "manual", "observationType": "note", "occurredAt": NOW, "title": "Cache", "content": "warm it"}
    )
    with evaluation_service(settings, clock=lambda: NOW) as service:
        temporary = service.settings.data_dir
        service.index("eval", [observation])
        assert service.search("eval", SearchRequest.model_validate({"query": "warm the cache"}), "r").results
        assert _open_under(temporary), "the store's files are open while it runs"
    # Then nothing stays open under the removed folder, and the cache lives in the user's folder
    assert not temporary.exists()
    assert _open_under(temporary) == []
    assert _open_under(settings.data_dir) == []
    assert settings.embedding_cache_path.exists()
