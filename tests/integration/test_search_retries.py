"""A search runs its retrieval at most twice (issue 58): a question about a year whose query also
implies filters (``autoFilters``, here the LLM's) used to retry each narrowing on its own, up to
four retrievals; now the narrowest search runs first and, when it holds fewer than ``topK``,
the query as written, each fallback still said in the reply. Through the real service, store and
local model; the LLM on a fake wire (its SDK runs)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from neural_memory.clock import to_iso
from neural_memory.models import ObservationIn, Retrieved, SearchRequest
from neural_memory.service import Service
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.pipeline import NOW, FakeClaude, claude_reply

if TYPE_CHECKING:
    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration
WS = "acme"
# (id, actor, year, title): one of bob's login changes in 2023, the others' in 2023 and 2024
CHANGES = [
    ("b23", "bob", 2023, "login redirect loop fixed"),
    ("a23", "alice", 2023, "login tokens rotated"),
    ("a24", "alice", 2024, "login page restyled"),
    ("c24", "carol", 2024, "login rate limit added"),
]


class CountingStore(SqliteStore):
    """The embedded store, counting its retrievals (one ``retrieve`` is one retrieval run)."""

    retrievals = 0

    def retrieve(self, workspace_id: str, **query: Any) -> Retrieved:
        self.retrievals += 1
        return super().retrieve(workspace_id, **query)


def _narrowing_to_bob(body: dict[str, Any]) -> httpx2.Response:
    narrowed = {"query": "login", "actorNames": ["bob"]}
    block = {"type": "tool_use", "id": "toolu_01", "name": "apply_filters", "input": narrowed}
    return httpx2.Response(200, json=claude_reply(content=[block]))


def test_a_search_with_both_fallbacks_retrieves_at_most_twice(settings: Settings, embedder: OnnxLocalEmbedder) -> None:
    # Given login changes of 2023 and 2024, one of 2023 by bob, and an LLM that narrows to bob
    store = CountingStore(settings.sqlite_path)
    proposer = FakeClaude(_narrowing_to_bob).proposer()
    memory = Service(store, embedder, settings, clock=lambda: NOW, proposer=proposer)
    memory.index(
        WS,
        [
            ObservationIn.model_validate(
                {"id": i, "source": "github", "observationType": "push", "actorName": actor, "tier": "A",
                 "occurredAt": to_iso(datetime(year, 6, 1, tzinfo=UTC)), "title": title}
            )
            for i, actor, year, title in CHANGES
        ],
    )  # fmt: skip
    store.retrievals = 0
    # When a question about 2023 asks for three results, with autoFilters: the year and bob's
    # filter hold one, the year alone two, so both fallbacks are due
    body = {"query": "what changed in 2023 about login", "topK": 3, "autoFilters": True, "llmFilter": False}
    reply = memory.search(WS, SearchRequest.model_validate(body), "r")
    # Then the retrieval ran twice: within the year and bob's filter, then as written
    assert store.retrievals == 2
    # And what the narrow search found comes first, the others after it, each fallback said
    ids = [r.id for r in reply.results]
    assert ids[0] == "b23" and set(ids) <= {c[0] for c in CHANGES} and len(ids) == 3
    assert reply.question is not None and reply.question.within_year and reply.question.year == 2023
    assert reply.auto_filters is not None and reply.auto_filters.fell_back
    assert "autoFilters:fallback (1 of 3 results within the inferred filters)" in reply.degraded


def test_a_narrow_search_that_holds_enough_retrieves_once(settings: Settings, embedder: OnnxLocalEmbedder) -> None:
    # Given the same changes, and one result asked for: bob's 2023 change is enough
    store = CountingStore(settings.sqlite_path)
    memory = Service(store, embedder, settings, clock=lambda: NOW, proposer=FakeClaude(_narrowing_to_bob).proposer())
    memory.index(
        WS,
        [
            ObservationIn.model_validate(
                {"id": i, "source": "github", "observationType": "push", "actorName": actor, "tier": "A",
                 "occurredAt": to_iso(datetime(year, 6, 1, tzinfo=UTC)), "title": title}
            )
            for i, actor, year, title in CHANGES
        ],
    )  # fmt: skip
    store.retrievals = 0
    body = {"query": "what changed in 2023 about login", "topK": 1, "autoFilters": True, "llmFilter": False}
    reply = memory.search(WS, SearchRequest.model_validate(body), "r")
    # Then one retrieval answered, within the year and the inferred filter, no fallback said
    assert store.retrievals == 1 and [r.id for r in reply.results] == ["b23"]
    assert reply.auto_filters is not None and not reply.auto_filters.fell_back
    assert not any(d.startswith("autoFilters") for d in reply.degraded)
