"""The tier lifecycle under concurrency, on both stores (threads against the OpenSearch store on
osmem, threads with their own connections and processes on one SQLite data folder): a post
written while an observation is promoted or cited keeps the promotion and the count; embedding
recurring E observations never reverts an edit or a supersession made meanwhile; of promotions
racing for one observation exactly one wins. And E observations written before the lifecycle
(no recurrence key) recur: the SQLite file is backfilled when opened, OpenSearch by the reindex."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.domain.ids import recurrence_key
from neural_memory.domain.record_rules import lifecycle_state
from neural_memory.errors import Conflict
from neural_memory.ingest import lifecycle
from neural_memory.ingest.lifecycle import embedded
from neural_memory.models import SearchRequest
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.base import RecordChanged, read_one
from neural_memory.stores.opensearch.documents import doc_id
from neural_memory.stores.opensearch.index import OpenSearchAdmin
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.sqlite.store import SqliteStore
from neural_memory.use_cases.reindexing import Reindexer
from opensearchpy import OpenSearch

from tests.helpers.fakes import HashEmbedder
from tests.helpers.pipeline import NOW, note
from tests.helpers.two_stores import svc  # noqa: F401  (the two-store fixture)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from neural_memory.models import Vector
    from neural_memory.providers.embeddings.base import InputType

pytestmark = pytest.mark.integration
WS = "acme"


class GatedEmbedder(HashEmbedder):
    """The hashing test embedder, holding the first call that embeds ``marker`` until released:
    the provider is slow exactly while another writer acts (a test double of the provider only)."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker = marker
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[Vector]:
        if not self.entered.is_set() and any(self.marker in text for text in texts):
            self.entered.set()
            assert self.release.wait(20)
        return super().embed(texts, input_type)


def turn(obs_id: str, text: str) -> Any:
    """A C observation (a conversation turn)."""
    return note(obs_id, text, text, observation_type="conversation_turn")


def failure(obs_id: str, build: int, text: str = "test_login timed out") -> Any:
    """An E observation: a CI run that failed (its build number varies, its cause not)."""
    content = f"Build {build} failed after {build % 300} s: {text}"
    occurred = NOW - timedelta(days=1)
    return note(obs_id, f"CI run {build} failed", content, observation_type="ci_run", occurred_at=occurred)


def gated(svc: Service, marker: str, **settings: Any) -> tuple[Service, GatedEmbedder]:  # noqa: F811
    embedder = GatedEmbedder(marker)
    return Service(svc.store, embedder, svc.settings.model_copy(update=settings), clock=lambda: NOW), embedder


def in_thread(work: Callable[[], object]) -> tuple[threading.Thread, list[BaseException]]:
    """``work`` started in a thread; what it raised, if anything, is in the list once joined."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # reported by the test, never lost in the thread
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


def found(service: Service, query: str) -> set[str]:
    body = {"query": query, "topK": 50, "mode": "keyword", "llmFilter": False}
    return {r.id for r in service.search(WS, SearchRequest.model_validate(body), "r").results}


# --------------------------------------------------------------------------- ingest vs lifecycle


def test_a_promotion_and_a_citation_made_while_a_post_is_written_are_kept(svc: Service) -> None:  # noqa: F811
    service, embedder = gated(svc, "edited while promoted")
    service.index(WS, [turn("c1", "retry policy")])
    # Given an edit of c1 being written (read, now being embedded)
    writer, errors = in_thread(lambda: service.index(WS, [turn("c1", "retry policy, edited while promoted")]))
    assert embedder.entered.wait(20)
    # When c1 is promoted and cited meanwhile
    service.promote(WS, "c1", "kept", "key:k", "r")
    assert lifecycle.note_citations(service.store, WS, ["c1"]) == {"c1": 1}
    embedder.release.set()
    writer.join(20)
    # Then the edit is stored, and so are the promotion and the count
    assert errors == []
    record = service.get(WS, "c1", "r")
    assert record.content == "retry policy, edited while promoted"
    assert (record.tier, record.expires_at, record.promoted_by, record.citations) == ("A", None, "key:k", 1)


# --------------------------------------------------------------------------- recurring E vs edits


def test_embedding_recurring_observations_keeps_a_supersession_and_an_edit_made_meanwhile(
    svc: Service,  # noqa: F811
) -> None:
    service, embedder = gated(svc, "Build 4121", embed_recurring_after=3)
    service.index(WS, [failure("e1", 4121), failure("e2", 4122)])
    # Given a third occurrence, whose write now embeds the earlier two (held in the embedder)
    writer, errors = in_thread(lambda: service.index(WS, [failure("e3", 4123)]))
    assert embedder.entered.wait(20)
    # When meanwhile e1 is superseded by a fix and e2 is edited (another cause)
    service.index(WS, [note("fix", "login test fixed", "test_login no longer times out", supersedes=["e1"])])
    service.index(WS, [failure("e2", 4122, text="disk full on runner")])
    embedder.release.set()
    writer.join(20)
    assert errors == []
    # Then e1 is embedded and still superseded: out of search
    e1 = service.get(WS, "e1", "r")
    assert (e1.superseded_by, e1.embedded_at) == ("fix", NOW)
    assert service.store.chunk_vectors(WS, embedder.model_id, [("e1", 0)]) != {}
    assert "e1" not in found(service, "test_login timed out") and "e3" in found(service, "test_login timed out")
    # And e2 keeps its edit, not embedded (its new content does not recur)
    e2 = service.get(WS, "e2", "r")
    assert ("disk full on runner" in e2.content, e2.embedded_at) == (True, None)
    assert "e2" in found(service, "disk full")


# --------------------------------------------------------------------------- the store's conditions


def test_the_stores_conditional_writes_leave_a_changed_record_alone(svc: Service) -> None:  # noqa: F811
    store = svc.store
    svc.index(WS, [turn("c1", "retry policy"), failure("e1", 4121)])
    c1 = read_one(store, WS, "c1")
    assert c1 is not None
    # restate: refused, naming the record as it is, when a checked value differs
    with pytest.raises(RecordChanged) as refused:
        lifecycle.restate(store, WS, "c1", {"tier": "A", "expires_at": None}, {"tier": "E"})
    assert refused.value.record.tier == "C" and read_one(store, WS, "c1") == c1
    # write: an item whose state was read before a change (a citation since) is left out
    lifecycle.note_citations(store, WS, ["c1"])
    edit = svc._writing.prepare(WS, turn("c1", "retry policy, edited"), NOW)
    outcome = store.write(WS, [edit], {"c1": lifecycle_state(c1)})
    assert (outcome.stale, outcome.updated) == (["c1"], [])
    assert read_one(store, WS, "c1").content == "retry policy"  # type: ignore[union-attr]
    # and one expected absent that exists is left out as well; one absent indeed is created
    new = svc._writing.prepare(WS, turn("c2", "backoff"), NOW)
    assert store.write(WS, [edit, new], {"c1": None, "c2": None}).model_dump(include={"stale", "created"}) == {
        "stale": ["c1"],
        "created": ["c2"],
    }
    # embed_stored: nothing for content edited since it was read, or a record already embedded
    e1 = read_one(store, WS, "e1")
    assert e1 is not None
    item = embedded(e1.model_copy(update={"content_hash": "edited since"}), NOW, svc.chunking)
    svc.embed_chunks(WS, [item])
    assert lifecycle.embed_stored(store, WS, [item]) == [] and read_one(store, WS, "e1") == e1
    item = embedded(e1, NOW, svc.chunking)
    svc.embed_chunks(WS, [item])
    assert lifecycle.embed_stored(store, WS, [item]) == ["e1"] and lifecycle.embed_stored(store, WS, [item]) == []
    assert read_one(store, WS, "e1") == e1.model_copy(update={"embedded_at": NOW})


# --------------------------------------------------------------------------- racing promotions


def _promote_all(services: Sequence[Service], observation_id: str) -> dict[str, str]:
    """Every service promotes the observation at once (one thread each, ``key:<n>``): what each
    got, ``ok`` or the conflict's message."""
    start = threading.Barrier(len(services))
    got: dict[str, str] = {}

    def promote(n: int, service: Service) -> None:
        start.wait()
        try:
            service.promote(WS, observation_id, f"reason {n}", f"key:{n}", "r")
            got[f"key:{n}"] = "ok"
        except Conflict as exc:
            got[f"key:{n}"] = str(exc)

    threads = [threading.Thread(target=promote, args=(n, s)) for n, s in enumerate(services)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return got


def _one_won(service: Service, observation_id: str, got: dict[str, str]) -> None:
    winners = [key for key, said in got.items() if said == "ok"]
    assert len(got) == 4 and len(winners) == 1, got
    record = service.get(WS, observation_id, "r")
    assert (record.tier, record.promoted_by, record.promotion_reason) == ("A", winners[0], f"reason {winners[0][4:]}")
    for key, said in got.items():
        if key != winners[0]:
            assert f"is tier A (promoted by {winners[0]} at" in said


def test_of_promotions_racing_for_one_observation_exactly_one_wins(svc: Service) -> None:  # noqa: F811
    svc.index(WS, [turn(f"c{n}", f"retry policy {n}") for n in range(6)])
    for n in range(6):
        _one_won(svc, f"c{n}", _promote_all([svc] * 4, f"c{n}"))


def test_promotions_through_separate_connections_to_one_data_folder_race_safely(settings: Settings) -> None:
    # Four stores on one SQLite file: four connections, each with its own lock (as four processes)
    stores = [SqliteStore(settings.sqlite_path) for _ in range(4)]
    services = [Service(store, HashEmbedder(), settings, clock=lambda: NOW) for store in stores]
    services[0].index(WS, [turn(f"c{n}", f"retry policy {n}") for n in range(6)])
    for n in range(6):
        _one_won(services[0], f"c{n}", _promote_all(services, f"c{n}"))


def _promote_in_process(data_dir: str, n: int, start: Any, results: Any) -> None:
    """A process of its own promoting c1 with ``key:<n>`` once every process is ready."""
    settings = Settings(data_dir=data_dir)
    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    service.get(WS, "c1", "r")  # connected, the file opened, before the race
    start.wait()
    try:
        service.promote(WS, "c1", f"reason {n}", f"key:{n}", "r")
        results.put((f"key:{n}", "ok"))
    except Conflict as exc:
        results.put((f"key:{n}", str(exc)))


def test_promotions_from_several_processes_on_one_data_folder_race_safely(settings: Settings) -> None:
    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    service.index(WS, [turn("c1", "retry policy")])
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(4), context.Queue()
    processes = [
        context.Process(target=_promote_in_process, args=(str(settings.data_dir), n, start, results)) for n in range(4)
    ]
    for process in processes:
        process.start()
    got = dict(results.get(timeout=120) for _ in processes)
    for process in processes:
        process.join(30)
    _one_won(service, "c1", got)


# --------------------------------------------------------------------------- older E observations


def _recurs_with_the_older_ones(service: Service) -> None:
    """A third occurrence embeds the two written before the lifecycle (found by their key)."""
    service.index(WS, [failure("e3", 4123)])
    embedded = {i: service.get(WS, i, "r").embedded_at for i in ("e1", "e2", "e3")}
    assert embedded == {"e1": NOW, "e2": NOW, "e3": NOW}


@pytest.mark.parametrize("older", ["without the column", "with the column left empty"])
def test_the_embedded_store_backfills_recurrence_keys_of_older_e_observations(settings: Settings, older: str) -> None:
    recurring = settings.model_copy(update={"embed_recurring_after": 3})
    store = SqliteStore(settings.sqlite_path)
    Service(store, HashEmbedder(), recurring, clock=lambda: NOW).index(WS, [failure("e1", 4121), failure("e2", 4122)])
    store.close()
    # Given a file as an earlier version left it: no recurrence_key column, or the column the
    # first lifecycle version added, empty for the rows written before it
    with sqlite3.connect(settings.sqlite_path) as conn:
        conn.execute("DELETE FROM meta WHERE key = 'recurrence_keys'")
        if older == "without the column":
            conn.execute("DROP INDEX observations_recurrence")
            conn.execute("ALTER TABLE observations DROP COLUMN recurrence_key")
        else:
            conn.execute("UPDATE observations SET recurrence_key = NULL")
    conn.close()
    # When the store opens it again, Then the keys are back, computed as new writes compute them
    store = SqliteStore(settings.sqlite_path)
    key = recurrence_key("CI run 4121 failed", "Build 4121 failed after 221 s: test_login timed out")
    assert read_one(store, WS, "e1").recurrence_key == key == read_one(store, WS, "e2").recurrence_key  # type: ignore[union-attr]
    # And the next occurrence recurs with them
    _recurs_with_the_older_ones(Service(store, HashEmbedder(), recurring, clock=lambda: NOW))


def test_a_reindex_gives_older_e_observations_their_recurrence_key(osmem_url: str, settings: Settings) -> None:
    client = OpenSearch(hosts=[osmem_url])
    admin = OpenSearchAdmin(client, "nm", replicas=0)
    assert admin.ensure_index(64, HashEmbedder().model_id) == "created"
    recurring = settings.model_copy(update={"embed_recurring_after": 3})
    old = Service(
        OpenSearchStore(client, "nm", refresh="true", single_index=True), HashEmbedder(), recurring, clock=lambda: NOW
    )
    old.index(WS, [failure("e1", 4121), failure("e2", 4122)])
    # Given their documents as a writer before the lifecycle left them: no recurrence key
    for observation_id in ("e1", "e2"):
        client.update(index="nm", id=doc_id(WS, observation_id, 0), body={"doc": {"recurrence_key": None}})
    client.indices.refresh(index="nm")
    key = recurrence_key("CI run 4121 failed", "Build 4121 failed after 221 s: test_login timed out")
    assert lifecycle.recurrences(old.store, WS, [key], 10) == {}
    # When the index is rebuilt (for another model)
    model_b = HashEmbedder(dimension=32)
    new = Service(
        OpenSearchStore(client, "nm", refresh="true", single_index=True), model_b, recurring, clock=lambda: NOW
    )
    assert Reindexer(new, admin, 100, clock=lambda: NOW + timedelta(minutes=2)).run().swapped
    # Then the copies carry the key, and the next occurrence recurs with them
    assert lifecycle.recurrences(new.store, WS, [key], 10)[key].count == 2
    _recurs_with_the_older_ones(new)
