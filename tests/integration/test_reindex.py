"""The index lifecycle on osmem-server: an index built for model A behind its alias is rebuilt for
model B (the real local model) by ``Reindexer`` while searches and writes go on, swapped in
atomically, and the old index kept until it is dropped on request."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.errors import ConfigurationError, NotFound
from neural_memory.models import SearchRequest
from neural_memory.service import Service
from neural_memory.stores.base import read_one
from neural_memory.stores.opensearch.index import OpenSearchAdmin, ReindexBusy
from neural_memory.stores.opensearch.store import OpenSearchStore
from neural_memory.stores.opensearch.workspace_indices import workspace_alias
from neural_memory.use_cases.index_bootstrap import bootstrap
from neural_memory.use_cases.reindexing import Reindexer
from opensearchpy import OpenSearch

from tests.helpers.fakes import HashEmbedder
from tests.helpers.pipeline import NOW, note

if TYPE_CHECKING:
    from pathlib import Path

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
    from neural_memory.settings import Settings
    from neural_memory.stores.opensearch.index import ReindexState

pytestmark = pytest.mark.integration
ALIAS = "nm"
LONG = " ".join(f"Sentence {i} of the incident review explains the rollback of release {i}." for i in range(60))


def _service(client: OpenSearch, embedder: Any, settings: Settings, at: datetime = NOW) -> Service:
    return Service(
        OpenSearchStore(client, ALIAS, refresh="true", single_index=True), embedder, settings, clock=lambda: at
    )


def _reindexer(service: Service, admin: OpenSearchAdmin, batch_size: int = 100) -> Reindexer:
    """A reindexer whose clock agrees with the writers' (NOW + 2 minutes; they write at NOW + 1)."""
    return Reindexer(service, admin, batch_size, clock=lambda: NOW + timedelta(minutes=2))


def _found(service: Service, workspace: str, query: str) -> set[str]:
    body = SearchRequest.model_validate(
        {"query": query, "topK": 50, "mode": "keyword", "llmFilter": False, "includeSuperseded": True}
    )
    return {r.id for r in service.search(workspace, body, "r").results}


@pytest.fixture
def old(osmem_url: str, settings: Settings) -> Service:
    """Model A's index (v1) behind the alias, with 12 observations in two workspaces: one long
    (several chunks), one superseded by another."""
    client = OpenSearch(hosts=[osmem_url])
    assert OpenSearchAdmin(client, ALIAS, replicas=0).ensure_index(64, HashEmbedder().model_id) == "created"
    service = _service(client, HashEmbedder(), settings, at=NOW - timedelta(days=1))
    service.index("acme", [note(f"a{i}", f"deploy note {i}", f"the deploy of service {i} went fine") for i in range(8)])
    service.index("acme", [note("long", "incident review", LONG)])
    service.index("acme", [note("old-plan", "deploy plan", "deploy on fridays")])
    service.index("acme", [note("new-plan", "deploy plan, revised", "never on fridays", supersedes=["old-plan"])])
    service.index("globex", [note("g1", "deploy note of globex", "globex deploys on mondays")])
    return service


def test_a_reindex_for_a_new_model_keeps_answering_and_swaps_atomically(
    old: Service, embedder: OnnxLocalEmbedder, settings: Settings
) -> None:
    client = old.store._client  # type: ignore[attr-defined]
    admin = OpenSearchAdmin(client, ALIAS, replicas=0)
    # Given the live index v1 for model A, and the service now configured with model B
    assert admin.live() == "nm-000001"
    new = _service(client, embedder, settings)
    assert admin.needs_reindex(embedder.dimension, embedder.model_id)
    with pytest.raises(ConfigurationError, match="neural-memory reindex"):
        admin.ensure_index(embedder.dimension, embedder.model_id)
    answered: list[set[str]] = []
    writer = _service(client, HashEmbedder(), settings, at=NOW + timedelta(minutes=1))

    def meanwhile(copied: int, total: int) -> None:
        # Searches keep answering from the old index throughout (osmem has no k-NN: lexically)
        answered.append(_found(old, "acme", "deploy"))
        if len(answered) == 2:
            # Writes keep going to the alias (the old index) while the new one is built, here all
            # of them behind the reindex's cursor (a5): a new one, one superseding a1 (which
            # changes a1's mark), a deleted one
            writer.index("acme", [note("a-late", "deploy note written during the reindex", "it lands in v1")])
            writer.index("acme", [note("a1-fix", "deploy note 1, corrected", "the deploy failed", supersedes=["a1"])])
            writer.delete("acme", "a0", "r")
            # and a writer already on model B (another dimension) is not refused by the old index
            # (its vector waits for the catch-up)
            _service(client, embedder, settings, at=NOW + timedelta(minutes=1)).index(
                "acme", [note("a-b", "deploy note of a writer on model B", "written during the reindex")]
            )
            assert admin.live() == "nm-000001"

    # When the reindex runs, a few observations at a time
    report = _reindexer(new, admin, batch_size=3).run(progress=meanwhile)

    # Then searches answered at every batch, from the old index
    assert len(answered) == 4 and all({"a2", "a7"} <= found for found in answered)
    assert report.swapped and report.source == "nm-000001" and report.target == "nm-000002"
    assert report.failed == {} and report.removed == 1 and report.caught_up == 4  # a-late, a1-fix, a1, a-b
    # And the alias names the new index, built for model B
    assert admin.live() == "nm-000002"
    assert admin.meta("nm-000002")["model_id"] == embedder.model_id and "reindex" not in admin.meta("nm-000002")
    admin.ensure_index(embedder.dimension, embedder.model_id)
    # And every observation is found under the alias, with model B's vectors, the writes made
    # during the reindex included and the deleted one gone
    expected = {f"a{i}" for i in range(1, 8)} | {"long", "old-plan", "new-plan", "a-late", "a1-fix", "a-b"}
    assert _found(new, "acme", "deploy incident review") == expected
    assert _found(new, "globex", "deploy") == {"g1"}
    assert read_one(new.store, "acme", "a0") is None
    chunks = [("a1", 0), ("long", 0), ("long", 2), ("a-late", 0), ("a-b", 0)]
    vectors = new.store.chunk_vectors("acme", embedder.model_id, chunks)
    assert len(vectors) == 5 and all(len(v) == embedder.dimension for v in vectors.values())
    assert new.store.chunk_vectors("acme", HashEmbedder().model_id, [("a1", 0)]) == {}
    # And supersession marks follow the last write, made while the reindex ran
    marks = {i: read_one(new.store, "acme", i).superseded_by for i in ("old-plan", "new-plan", "a1", "a1-fix")}  # type: ignore[union-attr]
    assert marks == {"old-plan": "new-plan", "new-plan": None, "a1": "a1-fix", "a1-fix": None}
    # And the old index is kept until dropped on request; the live one can never be dropped
    assert admin.versions() == ["nm-000001", "nm-000002"]
    with pytest.raises(ConfigurationError, match="live"):
        admin.drop("nm-000002")
    with pytest.raises(NotFound):
        admin.drop("globex")
    admin.drop("nm-000001")
    assert admin.versions() == ["nm-000002"]
    # And a second run finds nothing to do
    assert _reindexer(new, admin).run().source is None


def test_an_interrupted_reindex_resumes_where_it_stopped(old: Service, settings: Settings) -> None:
    client = old.store._client  # type: ignore[attr-defined]
    admin = OpenSearchAdmin(client, ALIAS, replicas=0)
    model_b = HashEmbedder(dimension=32)
    new = _service(client, model_b, settings)

    def stop_after_the_second_batch(copied: int, total: int) -> None:
        if copied >= 8:
            raise KeyboardInterrupt

    # Given a reindex stopped after two batches (Ctrl-C), the alias untouched
    with pytest.raises(KeyboardInterrupt):
        _reindexer(new, admin, batch_size=4).run(progress=stop_after_the_second_batch)
    assert admin.live() == "nm-000001"
    state = admin.in_progress()
    assert state is not None and state.target == "nm-000002" and state.copied == 8
    embedded_before = len(model_b.calls)
    # When it runs again
    report = _reindexer(new, admin, batch_size=4).run()
    # Then it copies only the rest (12 observations: 8 + 4), into the same index, and swaps
    assert report.swapped and report.target == "nm-000002" and report.copied == 12
    first_batch_texts = {t for texts, _ in model_b.calls[:embedded_before] for t in texts}
    resumed_texts = {t for texts, _ in model_b.calls[embedded_before:] for t in texts}
    assert not first_batch_texts & resumed_texts
    assert _found(new, "acme", "deploy incident review") >= {f"a{i}" for i in range(8)} | {"long"}


def test_a_deadline_stops_between_batches_and_the_bootstrap_resumes(
    old: Service, osmem_url: str, settings: Settings
) -> None:
    client = old.store._client  # type: ignore[attr-defined]
    model_b = HashEmbedder(dimension=32)
    opensearch = {"store": "opensearch", "opensearch_url": osmem_url, "opensearch_index": ALIAS}
    new = _service(client, model_b, settings.model_copy(update=opensearch | {"opensearch_replicas": 0}))
    admin = OpenSearchAdmin(client, ALIAS, replicas=0)
    # Given a deploy whose invocation has no time left: the reindex starts, copies nothing, and
    # says so; searches still answer from the old index
    report = _reindexer(new, admin).run(deadline=0.0)
    assert not report.swapped and report.copied == 0 and "run again to resume" in report.summary()
    assert admin.live() == "nm-000001" and _found(old, "acme", "deploy") >= {"a1"}
    # When the maintenance schedule's bootstrap runs with time enough, Then it copies the single
    # index (of the version before indices per workspace) into one index per workspace, as built
    # for model A, and reindexes each for model B
    outcome = bootstrap(new, deadline=None)
    acme, globex = workspace_alias(ALIAS, "acme"), workspace_alias(ALIAS, "globex")
    assert "nm-000001 -> 2 workspace indices: 36 documents copied" in outcome, outcome
    for alias in (acme, globex):
        assert f"{alias}-000001 -> {alias}-000002" in outcome, outcome
        assert OpenSearchAdmin(client, alias).live() == f"{alias}-000002"
    assert outcome.count("swapped in") == 2
    # And every workspace answers from its own index, for model B
    prefixed = Service(OpenSearchStore(client, ALIAS, refresh="true"), model_b, new.settings, clock=lambda: NOW)
    assert _found(prefixed, "acme", "deploy") >= {f"a{i}" for i in range(8)} and _found(
        prefixed, "globex", "deploy"
    ) == {"g1"}
    # And the next bootstrap only verifies (the single index is left as it was, marked migrated)
    assert bootstrap(new, deadline=None) == "template ok; workspace indices 2 ok"
    assert admin.live() == "nm-000001" and "migrated_at" in admin.meta("nm-000001")


def test_an_index_created_under_the_alias_name_before_versioning_is_replaced(
    osmem_url: str, settings: Settings
) -> None:
    from neural_memory.stores.opensearch.mapping import index_body

    client = OpenSearch(hosts=[osmem_url])
    # Given an index created under the very name the service uses (before indices had versions)
    client.indices.create(index=ALIAS, body=index_body(64, HashEmbedder().model_id, replicas=0))
    legacy = _service(client, HashEmbedder(), settings)
    legacy.index("acme", [note("x", "deploy note", "kept across the reindex")])
    admin = OpenSearchAdmin(client, ALIAS, replicas=0)
    assert admin.live() == ALIAS and admin.ensure_index(64, HashEmbedder().model_id) == "ok"
    new = _service(client, HashEmbedder(dimension=32), settings)
    # When a reindex is stopped while the old index's writes are blocked for its last catch-up,
    # Then the index takes writes again
    interrupted = InterruptedWhileBlocked(client, ALIAS, replicas=0)
    with pytest.raises(KeyboardInterrupt):
        _reindexer(new, interrupted).run()
    assert interrupted.blocked is False and admin.live() == ALIAS
    assert legacy.index("acme", [note("y", "deploy note", "written after the interruption")]).failed == {}
    # When it is reindexed for another model
    report = _reindexer(new, admin).run()
    # Then the alias takes its name (an alias cannot stand beside an index of the same name)
    assert report.swapped and admin.live() == "nm-000001"
    assert _found(new, "acme", "deploy") == {"x", "y"}


class InterruptedWhileBlocked(OpenSearchAdmin):
    """The real admin, stopped (Ctrl-C) at the first refresh made while writes are blocked."""

    blocked: bool | None = None

    def block_writes(self, index: str, *, blocked: bool) -> None:
        super().block_writes(index, blocked=blocked)
        self.blocked = blocked

    def refresh(self, index: str) -> None:
        if self.blocked:
            raise KeyboardInterrupt
        super().refresh(index)


def _cli_flags(monkeypatch: pytest.MonkeyPatch, osmem_url: str, data_dir: Path) -> list[str]:
    """The CLI's flags (and environment) for the OpenSearch store of these tests, without a model."""
    monkeypatch.setenv("NM_OPENSEARCH_INDEX", ALIAS)
    monkeypatch.setenv("NM_OPENSEARCH_REPLICAS", "0")
    return ["--store", "opensearch", "--opensearch-url", osmem_url, "--embedder", "none", "--data-dir", str(data_dir)]


def test_the_cli_reindexes_lists_and_drops(
    old: Service, osmem_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from neural_memory.local.cli import main

    flags = _cli_flags(monkeypatch, osmem_url, tmp_path)
    # Given model A's single index (of the version before indices per workspace), When the CLI
    # copies it per workspace
    assert main(["migrate-index", *flags]) == 0
    out = capsys.readouterr().out
    assert "nm-000001 -> 2 workspace indices: 36 documents copied, 0 kept" in out and "complete" in out
    # And a second run copies nothing (it is marked migrated), nor does a catch-up (all is there)
    assert main(["migrate-index", *flags]) == 0 and "0 documents copied" in capsys.readouterr().out
    assert main(["migrate-index", *flags, "--again"]) == 0
    assert "0 documents copied, 36 kept" in capsys.readouterr().out
    # When the CLI reindexes for another configuration (no embedder)
    assert main(["reindex", *flags, "--batch", "5"]) == 0
    out = capsys.readouterr().out
    # Then it says what it did for each workspace and how to drop the old index, which it kept
    acme, globex = workspace_alias(ALIAS, "acme"), workspace_alias(ALIAS, "globex")
    assert f"{acme}-000001 -> {acme}-000002: 11/11 observations copied" in out and "swapped in" in out
    assert f"{globex}-000001 -> {globex}-000002: 1/1 observations copied" in out
    assert f"neural-memory reindex --drop {acme}-000001" in out
    assert main(["reindex", *flags, "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[:2] for line in listed] == [
        [f"{acme}-000001", "old"],
        [f"{acme}-000002", "live"],
        [f"{globex}-000001", "old"],
        [f"{globex}-000002", "live"],
    ]
    assert "model none" in listed[1]
    assert main(["reindex", *flags, "--drop", f"{acme}-000001"]) == 0
    assert OpenSearchAdmin(old.store._client, acme).versions() == [f"{acme}-000002"]  # type: ignore[attr-defined]
    # And the single index is never dropped as a workspace's
    assert main(["reindex", *flags, "--drop", "nm-000001"]) == 1


def test_the_cli_goes_on_past_a_workspace_another_run_holds(
    old: Service, osmem_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from neural_memory.local.cli import main

    flags = _cli_flags(monkeypatch, osmem_url, tmp_path)
    assert main(["migrate-index", *flags]) == 0
    client = old.store._client  # type: ignore[attr-defined]
    acme, globex = workspace_alias(ALIAS, "acme"), workspace_alias(ALIAS, "globex")
    held = OpenSearchAdmin(client, acme, replicas=0)
    prefixed = Service(OpenSearchStore(client, ALIAS, refresh="true"), None, old.settings)  # as the CLI: no model
    codes: list[int] = []

    def the_cli_meanwhile(copied: int, total: int) -> None:
        if not codes:
            capsys.readouterr()
            codes.append(main(["reindex", *flags, "--batch", "5"]))

    # Given a reindex of acme's index under way (holding its claim), When the CLI reindexes every workspace
    assert Reindexer(prefixed, held, batch_size=4).run(progress=the_cli_meanwhile).swapped  # on the clock the CLI reads
    out, err = capsys.readouterr()
    # Then it says acme is busy, still reindexes globex, and exits 1 so a script runs it again
    assert codes == [1]
    assert f"not now: another reindex into {acme}-000002 holds its claim" in err
    assert f"busy, run again later: {acme}" in err
    assert f"{globex}-000001 -> {globex}-000002: 1/1 observations copied" in out and "swapped in" in out


def test_one_reindex_at_a_time(old: Service, settings: Settings) -> None:
    client = old.store._client  # type: ignore[attr-defined]
    admin = OpenSearchAdmin(client, ALIAS, replicas=0)
    new = _service(client, HashEmbedder(dimension=32), settings)
    refused: list[str] = []

    def a_second_run_meanwhile(copied: int, total: int) -> None:
        if not refused:
            # A second run (the schedule firing during the deploy's run, an operator's CLI) is
            # refused while the first holds its claim, and changes nothing
            with pytest.raises(ReindexBusy, match="holds its claim") as busy:
                _reindexer(new, admin).run()
            refused.append(str(busy.value))

    report = _reindexer(new, admin, batch_size=4).run(progress=a_second_run_meanwhile)
    assert refused and report.swapped and report.copied == 12
    assert admin.versions() == ["nm-000001", "nm-000002"]


class WritesRacingTheSwap(OpenSearchAdmin):
    """The real admin, with writes made around the alias's move: through the alias just before it
    moves (they land in the old index, after the last catch-up) and just after (in the new one)."""

    def __init__(self, client: OpenSearch, writer: Service) -> None:
        super().__init__(client, ALIAS, replicas=0)
        self.writer = writer

    def swap(self, state: ReindexState) -> None:
        self.writer.index("acme", [note("racer", "deploy note that raced the swap", "written to v1 last")])
        self.writer.index("acme", [note("a3", "deploy note 3, edited", "edited just before the swap")])
        self.writer.index("acme", [note("a4", "deploy note 4, edited", "edited, then deleted after the swap")])
        self.writer.delete("acme", "a2", "r")
        super().swap(state)
        self.writer.delete("acme", "a4", "r")
        self.writer.index("acme", [note("fresh", "deploy note written after the swap", "straight into v2")])


def test_writes_that_race_the_swap_are_caught_up_without_losing_later_ones(old: Service, settings: Settings) -> None:
    client = old.store._client  # type: ignore[attr-defined]
    writer = _service(client, HashEmbedder(), settings, at=NOW + timedelta(minutes=1))
    admin = WritesRacingTheSwap(client, writer)
    new = _service(client, HashEmbedder(dimension=32), settings)
    report = _reindexer(new, admin).run()
    assert report.swapped and admin.live() == "nm-000002"
    found = _found(new, "acme", "deploy note")
    # The write and the edit that reached the old index after the last catch-up are in the new one
    assert {"racer", "a3", "fresh"} <= found
    assert "edited just before the swap" in read_one(new.store, "acme", "a3").content  # type: ignore[union-attr]
    # The delete made in the old index just before the swap is made in the new one too; the
    # delete made in the new one after the swap is not undone; the write made after it stays
    assert "a2" not in found and "a4" not in found


def test_the_alias_does_not_move_while_an_observation_is_refused(
    old: Service, osmem_url: str, settings: Settings
) -> None:
    from tests.helpers.opensearch_faults import POISON, FaultyDomain

    # Given an observation the old index holds but the new one refuses (a 400 for that document)
    old.index("acme", [note("poisoned", "deploy note", f"carries {POISON}")])
    domain = FaultyDomain(osmem_url, max_body=10_000_000)
    try:
        client = OpenSearch(hosts=[domain.url])
        admin = OpenSearchAdmin(client, ALIAS, replicas=0)
        new = _service(client, HashEmbedder(dimension=32), settings)
        # When the reindex runs, Then it copies the rest but keeps the alias, naming the refused one
        report = _reindexer(new, admin).run()
        assert not report.swapped and list(report.failed) == [("acme", "poisoned")]
        assert "1 observations refused" in report.summary() and admin.live() == "nm-000001"
        # When the observation is deleted from the old index, Then the next run completes
        old.delete("acme", "poisoned", "r")
        report = _reindexer(new, admin).run()
        assert report.swapped and report.failed == {} and admin.live() == "nm-000002"
    finally:
        domain.shutdown()


def test_a_refused_observation_can_be_left_behind_on_request(old: Service, osmem_url: str, settings: Settings) -> None:
    from tests.helpers.opensearch_faults import POISON, FaultyDomain

    old.index("acme", [note("poisoned", "deploy note", f"carries {POISON}")])
    domain = FaultyDomain(osmem_url, max_body=10_000_000)
    try:
        client = OpenSearch(hosts=[domain.url])
        admin = OpenSearchAdmin(client, ALIAS, replicas=0)
        report = _reindexer(_service(client, HashEmbedder(dimension=32), settings), admin).run(force=True)
        assert report.swapped and list(report.failed) == [("acme", "poisoned")]
        assert "1 refused" in report.summary() and admin.live() == "nm-000002"
    finally:
        domain.shutdown()


def test_a_rolled_back_model_returns_to_the_kept_index_and_catches_up_only_what_changed(
    old: Service, settings: Settings
) -> None:
    client = old.store._client  # type: ignore[attr-defined]
    admin = OpenSearchAdmin(client, ALIAS, replicas=0)
    # Given a reindex from model A (v1) to model B (v2), and writes made to v2 afterwards
    model_b = _service(client, HashEmbedder(dimension=32), settings, at=NOW + timedelta(minutes=3))
    assert _reindexer(model_b, admin).run().swapped
    model_b.index("acme", [note("after", "deploy note written on model B", "only v2 has it")])
    model_b.index("acme", [note("a5", "deploy note 5, edited on model B", "edited after the swap")])
    model_b.delete("acme", "a6", "r")
    # When the deploy is rolled back to model A
    model_a = HashEmbedder()
    report = Reindexer(_service(client, model_a, settings), admin, clock=lambda: NOW + timedelta(minutes=10)).run()
    # Then the alias returns to v1, which was kept, and only what changed since the swap is
    # embedded again: no third index, no full copy
    assert report.swapped and (report.source, report.target) == ("nm-000002", "nm-000001")
    assert admin.live() == "nm-000001" and admin.versions() == ["nm-000001", "nm-000002"]
    assert report.copied == 0 and report.removed == 1
    embedded = {text for texts, _ in model_a.calls for text in texts}
    assert embedded and all("on model B" in text for text in embedded)
    model_a_service = _service(client, model_a, settings)
    found = _found(model_a_service, "acme", "deploy note")
    assert {"after", "a5"} <= found and "a6" not in found
    assert "edited after the swap" in read_one(model_a_service.store, "acme", "a5").content  # type: ignore[union-attr]


def test_a_reindex_keeps_each_chat_turns_context(old: Service, embedder: OnnxLocalEmbedder, settings: Settings) -> None:
    """A turn's context chunk (the turns before it in its session) is rebuilt by the reindex, which
    reads records by id: so an answer stays found by the question it answers."""
    from neural_memory.models import ObservationIn

    def turn(obs_id: str, content: str, minutes_ago: int) -> ObservationIn:
        at = (NOW - timedelta(days=1, minutes=minutes_ago)).isoformat()
        fields = {"id": obs_id, "source": "agent", "observationType": "conversation_turn", "sessionId": "s1"}
        return ObservationIn.model_validate(fields | {"tier": "A", "occurredAt": at, "content": content})

    # Given turns remembered one by one, their ids in another order than their times
    for observation in (turn("t9", "did the zeppelin migration finish", 30), turn("t1", "Yes, last Tuesday.", 20)):
        old.index("acme", [observation])
    old.index("acme", [turn("t5", "Good, then we close the ticket.", 10)])
    assert {"t9", "t1"} <= _found(old, "acme", "zeppelin migration")
    # When the index is rebuilt for another model, a record at a time
    client = old.store._client  # type: ignore[attr-defined]
    new = _service(client, embedder, settings)
    assert _reindexer(new, OpenSearchAdmin(client, ALIAS, replicas=0), batch_size=2).run().swapped
    # Then the answer is still found by the question's words (its context chunk), and the turn
    # after it by the answer's and the question's
    assert {"t9", "t1", "t5"} <= _found(new, "acme", "zeppelin migration")
    assert "t5" in _found(new, "acme", "Tuesday")
