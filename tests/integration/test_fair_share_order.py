"""Interactive before bulk, deterministically (issue 58): while a bulk batch's slices wait in the
document queue (``fair_share.FairQueue``) behind one held slice, a single write (of another
workspace, or a hook's turn in the bulk's own workspace) is served and acknowledged, and not one
more bulk slice is embedded meanwhile. Through the real service, SQLite store, queue and local
model; the one worker thread is held on the bulk's first slice by an event, so nothing depends on
timing (served in turns, the write waited behind the held slice and failed here after 30 s)."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from neural_memory.models import ObservationIn, SearchRequest
from neural_memory.providers.embeddings.fair_share import SLICE_TEXTS, FairQueue
from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
from neural_memory.service import Service
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.pipeline import NOW

if TYPE_CHECKING:
    from neural_memory.models import Vector
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration
BULK = 100  # observations of the bulk batch: many slices
WAIT_S = 30  # the most the single write may take while the queue's one worker is held


def _observation(obs_id: str, text: str, **extra: str) -> ObservationIn:
    return ObservationIn.model_validate(
        {"id": obs_id, "source": "manual", "observationType": "note", "tier": "A",
         "occurredAt": (NOW - timedelta(hours=1)).isoformat(), "title": text, "content": f"{text}, in detail", **extra}
    )  # fmt: skip


@pytest.mark.parametrize(
    ("bulk_workspace", "quiet"),
    [
        ("noisy", [_observation("quiet-1", "the payments retry budget was raised to five")]),
        (
            "quiet",  # a hook's turn (the prompt and the answer) beside its own workspace's import
            [
                _observation("turn-1", "why was the payments retry budget raised", sessionId="s1"),
                _observation("turn-2", "the payments retry budget was raised to five", sessionId="s1"),
            ],
        ),
    ],
    ids=["another-workspace", "the-same-workspace"],
)
def test_a_single_write_is_served_before_a_bulk_batchs_queued_slices(
    settings: Settings, bulk_workspace: str, quiet: list[ObservationIn]
) -> None:
    # Given a server's embedder, its document queue down to one worker held on the first slice
    embedder = OnnxLocalEmbedder(documents_yield_to_queries=True)
    embedder.load()
    documents = embedder._documents
    assert documents is not None
    served: list[list[str]] = []
    held, release = threading.Event(), threading.Event()

    def slice_held_first(texts: list[str]) -> list[Vector]:
        served.append(texts)
        if len(served) == 1:
            held.set()
            release.wait(2 * WAIT_S)
        return documents._embed_part(texts)  # the real model, on the worker's own session

    documents._queue = FairQueue(1, slice_held_first)
    memory = Service(SqliteStore(settings.sqlite_path), embedder, settings, clock=lambda: NOW)
    batch = [_observation(f"bulk-{n}", f"deploy note {n} about shard {n % 7} and replica {n % 5}") for n in range(BULK)]
    bulk = threading.Thread(target=memory.index, args=(bulk_workspace, batch), daemon=True)
    bulk.start()
    try:
        assert held.wait(WAIT_S), "the bulk batch never reached the queue"
        # When the single write comes while the bulk's other slices wait behind the held one
        written: list[object] = []
        write = threading.Thread(target=lambda: written.append(memory.index("quiet", quiet)), daemon=True)
        write.start()
        write.join(WAIT_S)
        # Then it is acknowledged with the bulk's slices still queued, and none of them served
        assert written, f"the single write waited behind the bulk batch ({len(served)} slices served)"
        assert len(served) == 1
    finally:
        release.set()
        bulk.join(WAIT_S * 4)
    # And once released the bulk batch is served too, in slices, and both are found by meaning
    assert not bulk.is_alive()
    assert len(served) >= BULK // SLICE_TEXTS and max(len(texts) for texts in served) <= SLICE_TEXTS
    query = SearchRequest.model_validate({"query": "how many retries may a payment make", "mode": "semantic"})
    assert memory.search("quiet", query, "r").results[0].id in {o.id for o in quiet}
