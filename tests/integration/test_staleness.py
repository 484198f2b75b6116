"""What went stale, on both stores: a note naming code (``codeRefs``) is marked ``possiblyStale``
when a later GitHub push to that repository touches one of its paths, through the event bus (the
ingest function's SQS batch) and the webhook receiver; shown in reads and results, left out by
``filters.fresh``, idempotent under replay, whatever the order of arrival, never across
repositories or workspaces, cleared when the push goes, and carried into a new OpenSearch index by
a reindex that a push races."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import random
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.auth.factory import build_key_store
from neural_memory.domain.record_rules import CLAIM_TYPES
from neural_memory.engineering.staleness import referencing, set_marks
from neural_memory.ingest import lifecycle
from neural_memory.ingest.normalizers import normalize_eventbridge
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.models import SearchRequest
from neural_memory.runtime import set_service
from neural_memory.settings import Settings
from neural_memory.stores.base import read_one
from neural_memory.stores.opensearch import patches as opensearch_patches
from neural_memory.stores.opensearch import store as opensearch_store
from neural_memory.stores.opensearch.index import OpenSearchAdmin
from opensearchpy import OpenSearch

from functions.ingest import app as ingest_app
from tests.helpers.events import load_event
from tests.helpers.fakes import HashEmbedder
from tests.helpers.pipeline import NOW, note
from tests.integration.test_lineage import samples
from tests.integration.test_reindex import ALIAS, _reindexer, _service

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.service import Service

pytestmark = pytest.mark.integration

ROUTES = {"github:acme/console": "acme"}
SECRET = "gh-webhook-secret"
FIX_SHA = "7f3a9b2c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f70"  # the sample push's head, at 2025-12-12T09:58:30Z
PUSH_ID = "github-push-acme.console-7f3a9b2c1d0e"
BEFORE = datetime(2025, 12, 11, 9, 0, tzinfo=UTC)
AFTER = datetime(2025, 12, 13, 9, 0, tzinfo=UTC)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """The two-store fixture's settings (it builds ``svc`` from these), with the push's route."""
    return Settings(data_dir=tmp_path, ingest_routes=ROUTES, github_webhook_secret=SECRET)


@pytest.fixture
def installed(svc: Service) -> Iterator[Service]:
    set_service(svc)
    yield svc
    set_service(None)


def _noted(obs_id: str, occurred_at: datetime, repository: str = "acme/console", **extra: Any) -> Any:
    refs = [{"repository": repository, "paths": ["src/auth/middleware.ts", "docs/auth.md"]}]
    return note(obs_id, f"How auth works ({obs_id})", "Sessions refresh in the edge middleware.",
                code_refs=refs, occurred_at=occurred_at, **extra)  # fmt: skip


def _push(after: str = FIX_SHA, at: str = "2025-12-12T09:58:30Z", paths: list[str] | None = None) -> dict[str, Any]:
    """The sample push's EventBridge event, or another push of the same repository."""
    event = load_event("eventbridge/github_push")
    detail = event["detail"]
    if after != FIX_SHA:
        detail["after"] = after
        detail["head_commit"] = dict(detail["head_commit"], id=after, timestamp=at)
        detail["commits"] = [dict(detail["commits"][-1], id=after, timestamp=at, modified=paths or [])]
    return event


def _sqs(*events: dict[str, Any]) -> dict[str, Any]:
    template = load_event("sqs/ingest_batch")["Records"][0]
    records = [dict(template, messageId=f"msg-{n}", body=json.dumps(e)) for n, e in enumerate(events)]
    return {"Records": records}


def _stale(svc: Service, obs_id: str, workspace: str = "acme") -> str | None:
    record = read_one(svc.store, workspace, obs_id)
    assert record is not None, obs_id
    return record.possibly_stale


def _search(svc: Service, **filters: Any) -> dict[str, str | None]:
    body = {"query": "auth sessions edge middleware", "topK": 50, "mode": "keyword", "llmFilter": False}
    request = SearchRequest.model_validate(body | ({"filters": filters} if filters else {}))
    return {r.id: r.possibly_stale for r in svc.search("acme", request, "r").results}


def test_a_push_through_the_bus_marks_a_noted_path_stale(
    installed: Service, lambda_context: LocalLambdaContext
) -> None:
    svc = installed
    # Given a note about the auth middleware, one written after the push, one about another
    # repository's file of the same path, and another workspace's note about the same file
    svc.index("acme", [_noted("before", BEFORE), _noted("after", AFTER), _noted("api", BEFORE, "acme/api")])
    svc.index("rival", [_noted("rival", BEFORE)])
    # When the push touching src/auth/middleware.ts arrives through the bus (SQS batch)
    assert ingest_app.lambda_handler(_sqs(_push()), lambda_context)["batchItemFailures"] == []
    # Then the earlier note is marked with the push's commit, and only it
    assert _stale(svc, "before") == FIX_SHA
    assert (_stale(svc, "after"), _stale(svc, "api"), _stale(svc, "rival", "rival")) == (None, None, None)
    # And reads and results show it; filters.fresh leaves it out; nothing was deleted
    shown = svc.get("acme", "before", "r")
    assert shown.possibly_stale == FIX_SHA
    assert [(ref.repository, ref.paths) for ref in shown.code_refs or []] == [
        ("acme/console", ["src/auth/middleware.ts", "docs/auth.md"])
    ]
    assert _search(svc)["before"] == FIX_SHA and _search(svc)["after"] is None
    assert "before" not in _search(svc, fresh=True) and {"after", "api"} <= set(_search(svc, fresh=True))
    assert svc.store.count("acme") == 4
    # When the same batch is delivered again, Then nothing changes
    assert ingest_app.lambda_handler(_sqs(_push()), lambda_context)["batchItemFailures"] == []
    assert (_stale(svc, "before"), _stale(svc, "after"), svc.store.count("acme")) == (FIX_SHA, None, 4)
    push = read_one(svc.store, "acme", PUSH_ID)
    assert push is not None and "acme/console:src/auth/middleware.ts" in (push.code_refs or [])
    # And the store keeps to the workspace: rival can neither find nor mark acme's
    middleware = "acme/console:src/auth/middleware.ts"
    assert [r.id for r in referencing(svc.store, "rival", [middleware], NOW)] == ["rival"]
    assert [r.id for r in referencing(svc.store, "acme", [middleware], NOW)] == ["before", PUSH_ID, "after"]
    set_marks(svc.store, "rival", {"after": ("x" * 40, NOW)})
    assert _stale(svc, "after") is None


def test_a_signed_webhook_push_marks_it_too(installed: Service) -> None:
    svc = installed
    svc.index("acme", [_noted("before", BEFORE)])
    body = json.dumps(copy.deepcopy(_push()["detail"])).encode()
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": "push",
        "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
        "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest(),
    }
    gateway = LocalGateway(build_key_store(svc.settings))
    for _ in range(2):  # a redelivery changes nothing
        reply = gateway.dispatch("POST", "/v1/webhooks/github", headers, body)
        assert reply.status == 200 and json.loads(reply.body)["sentTo"] == "local", reply.body
        assert _stale(svc, "before") == FIX_SHA


def _normalized(event: dict[str, Any]) -> Any:
    return normalize_eventbridge(event).observations


def test_the_earliest_later_push_marks_it_whatever_the_order_and_a_deleted_push_releases_it(svc: Service) -> None:
    later_sha = "b" * 40
    later = _normalized(_push(later_sha, "2025-12-12T15:00:00Z", ["docs/auth.md"]))
    unrelated = _normalized(_push("c" * 40, "2025-12-12T08:00:00Z", ["README.md"]))
    # Given the pushes first: the note (older than both) is marked as it is written, by the earlier
    svc.index("acme", [*later, *unrelated])
    svc.index("acme", [_noted("before", BEFORE)])
    assert _stale(svc, "before") == later_sha
    svc.index("acme", _normalized(_push()))  # an earlier push touching it arrives after
    assert _stale(svc, "before") == FIX_SHA
    # When the note is rewritten (a replay), Then it is still marked
    svc.index("acme", [_noted("before", BEFORE)])
    assert _stale(svc, "before") == FIX_SHA
    # When the earlier push is deleted, Then the later one marks it; when that goes too, nothing does
    svc.delete("acme", PUSH_ID, "r")
    assert _stale(svc, "before") == later_sha
    svc.delete("acme", later[0].id, "r")
    assert _stale(svc, "before") is None


def test_on_the_samples_the_decision_about_the_middleware_is_stale(svc: Service) -> None:
    svc.index("acme", samples())
    assert _stale(svc, "decision-session-refresh-edge") == FIX_SHA
    assert _stale(svc, "note-deploy-env-vars") is None


def test_a_push_written_while_opensearch_reindexes_marks_the_note_in_the_new_index(
    osmem_url: str, settings: Settings
) -> None:
    # Given an index holding the note (and a few others, so the reindex runs in batches)
    client = OpenSearch(hosts=[osmem_url])
    admin = OpenSearchAdmin(client, ALIAS, replicas=0)
    assert admin.ensure_index(64, HashEmbedder().model_id) == "created"
    _service(client, HashEmbedder(), settings, at=NOW - timedelta(days=1)).index(
        "acme", [_noted("before", BEFORE), *[note(f"n{i}", f"note {i}") for i in range(5)]]
    )
    writer = _service(client, HashEmbedder(), settings, at=NOW + timedelta(minutes=1))

    def meanwhile(copied: int, total: int) -> None:
        if copied == 3:  # the note is behind the cursor: copied unmarked
            writer.index("acme", _normalized(_push()))
            assert _stale(writer, "before") == FIX_SHA  # marked in the old index

    # When a reindex for another model runs while the push arrives
    new = _service(client, HashEmbedder(dimension=32), settings)
    report = _reindexer(new, admin, batch_size=3).run(progress=meanwhile)
    # Then the new index holds the note with its mark (copied again with the push)
    assert report.swapped and admin.live() == "nm-000002"
    assert _stale(new, "before") == FIX_SHA


def test_every_observation_naming_a_path_is_found_however_many(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    # OpenSearch reads them page by page, and marks them page by page
    monkeypatch.setattr(opensearch_store, "MARK_PAGE", 2)
    monkeypatch.setattr(opensearch_patches, "MARK_PAGE", 2)
    svc.index("acme", [_noted(f"n{i}", BEFORE + timedelta(minutes=i)) for i in range(5)])
    svc.index("acme", _normalized(_push()))
    found = referencing(svc.store, "acme", ["acme/console:docs/auth.md"], NOW)
    assert [r.id for r in found] == [f"n{i}" for i in range(5)]
    assert all(_stale(svc, f"n{i}") == FIX_SHA for i in range(5))


def test_an_archived_push_still_marks_and_links(svc: Service) -> None:
    # Given the push (tier E), archived by the daily maintenance (left out of search by default)
    svc.index("acme", _normalized(_push()))
    assert lifecycle.archive_execution(svc.store, AFTER, NOW) == 1
    # When a note about the code it touched, older than it, is written
    svc.index("acme", [_noted("before", BEFORE, metadata={"commitSha": FIX_SHA})])
    # Then the archived push still marks it: archiving hides it from search, not from its history
    assert _stale(svc, "before") == FIX_SHA
    assert [r.id for r in referencing(svc.store, "acme", ["acme/console:src/auth/middleware.ts"], NOW)] == [
        "before",
        PUSH_ID,
    ]
    # And the lineage of the note still shows the push sharing its commit
    timeline = svc.lineage("acme", "before", 10, "r").timeline
    assert [entry.id for entry in timeline] == ["before", PUSH_ID]


def _expected_marks(svc: Service, workspace: str, ids: list[str]) -> dict[str, str | None]:
    """The marks the stored observations imply, computed the plain way: for each claim, the commit
    of the earliest push (ties by id) after it that touched one of its paths; events none."""
    stored = svc.store.read(workspace, ids)
    pushes = [r for r in stored.values() if r.observation_type == "push"]
    expected: dict[str, str | None] = {}
    for record in stored.values():
        later = [
            p
            for p in pushes
            if p.occurred_at > record.occurred_at and set(p.code_refs or ()) & set(record.code_refs or ())
        ]
        first = min(later, key=lambda p: (p.occurred_at, p.id), default=None)
        claim = record.observation_type in CLAIM_TYPES
        expected[record.id] = None if first is None or not claim else str(first.metadata["commitSha"])
    return expected


def test_marks_are_the_same_whatever_the_order_of_arrival_batching_and_replays(svc: Service) -> None:
    paths = ["src/auth/middleware.ts", "docs/auth.md", "package.json"]
    hours = [2, 5, 5, 9, 12, 20]  # two pushes at the same time: the mark is the first by id
    pushes = [
        _normalized(_push(f"{n:x}" * 40, f"2025-12-12T{h:02d}:00:00Z", [paths[n % 3], "package.json"]))[0]
        for n, h in zip(range(1, 7), hours, strict=True)
    ]
    notes = [
        note(f"note-{n}", f"About the code ({n})", "the auth middleware",
             occurred_at=datetime(2025, 12, 12, h, 30, tzinfo=UTC),
             code_refs=[{"repository": "acme/console", "paths": [paths[n % 3]]}])
        for n, h in enumerate([1, 4, 6, 11])
    ]  # fmt: skip
    everything = [*pushes, *notes]
    ids = [o.id for o in everything]
    for seed in range(4):
        workspace = f"order-{seed}"
        shuffled = random.Random(seed).sample(everything, len(everything))
        start = 0
        while start < len(shuffled):  # batches of 1 to 3, as a bus delivery groups them
            size = random.Random(seed * 100 + start).randint(1, 3)
            svc.index(workspace, shuffled[start : start + size])
            start += size
        svc.index(workspace, random.Random(seed).sample(everything, 3))  # replays
        marks = {i: r.possibly_stale for i, r in svc.store.read(workspace, ids).items()}
        assert marks == _expected_marks(svc, workspace, ids), seed
        assert sum(mark is not None for mark in marks.values()) == 4  # every note; no push
        # When a push is deleted, Then what it marked is marked again from what remains
        svc.delete(workspace, pushes[1].id, "r")
        left = [i for i in ids if i != pushes[1].id]
        assert {i: r.possibly_stale for i, r in svc.store.read(workspace, left).items()} == _expected_marks(
            svc, workspace, left
        )


def test_only_claims_go_stale_and_only_pushes_to_the_default_branch_mark(svc: Service) -> None:
    # Given a note, a merged PR and an earlier push naming the middleware, all before a later push
    before = datetime(2025, 12, 12, 8, tzinfo=UTC)
    refs = [{"repository": "acme/console", "paths": ["src/auth/middleware.ts"]}]
    merged = note("pr", "Edge sessions", "PR body", observation_type="pull_request_merged", occurred_at=before,
                  code_refs=refs)  # fmt: skip
    first = _push("e" * 40, "2025-12-12T07:00:00Z", ["src/auth/middleware.ts"])
    svc.index("acme", [_noted("note", before), merged, *_normalized(first)])
    # When a push to a feature branch touches it, Then nothing is marked
    feature = _push("f" * 40, "2025-12-12T11:00:00Z", ["src/auth/middleware.ts"])
    feature["detail"]["ref"] = "refs/heads/feature/edge"
    feature["detail"]["repository"]["default_branch"] = "main"
    svc.index("acme", _normalized(feature))
    assert _stale(svc, "note") is None
    # When a push to the default branch touches it, Then only the claim is marked: events never
    svc.index("acme", _normalized(_push()))
    assert _stale(svc, "note") == FIX_SHA
    assert _stale(svc, "pr") is None and _stale(svc, "github-push-acme.console-eeeeeeeeeeee") is None
    assert all(r.possibly_stale is None for r in svc.store.read("acme", [PUSH_ID, "pr"]).values())


def test_a_claim_naming_a_file_in_its_text_goes_stale_by_its_path_its_tail_or_its_name(svc: Service) -> None:
    # Given notes that name the middleware only in their words: the whole path in the sample's
    # repository, a tail of it in any repository, a file name; and one naming another file
    before = datetime(2025, 12, 12, 8, tzinfo=UTC)
    svc.index(
        "acme",
        [
            note("whole", "Edge refresh", "It lives in `src/auth/middleware.ts`.", occurred_at=before,
                 metadata={"repo": "acme/console"}),
            note("tail", "Edge refresh", "See auth/middleware.ts for the refresh.", occurred_at=before),
            note("name", "Edge refresh", "middleware.ts refreshes the session.", occurred_at=before),
            note("other", "Sessions", "The cookie code is in src/auth/cookies.ts.", occurred_at=before),
            note("elsewhere", "Edge refresh", "`src/auth/middleware.ts`", occurred_at=before,
                 metadata={"repo": "acme/other"}),
        ],
    )  # fmt: skip
    # When the sample push touches src/auth/middleware.ts
    svc.index("acme", _normalized(_push()))
    # Then the notes naming it are marked, the others not; the API shows a named repository's path only
    assert {i: _stale(svc, i) for i in ("whole", "tail", "name", "other", "elsewhere")} == {
        "whole": FIX_SHA,
        "tail": FIX_SHA,
        "name": FIX_SHA,
        "other": None,
        "elsewhere": None,
    }
    shown = svc.get("acme", "whole", "r").code_refs
    assert shown is not None and [(r.repository, r.paths) for r in shown] == [
        ("acme/console", ["src/auth/middleware.ts"])
    ]
    assert svc.get("acme", "tail", "r").code_refs is None
    # And a note written after the push, naming it, is marked by no earlier push
    svc.index("acme", [note("after", "Edge refresh", "middleware.ts", occurred_at=datetime(2025, 12, 13, tzinfo=UTC))])
    assert _stale(svc, "after") is None


def test_a_mark_made_before_its_push_time_was_kept_is_recomputed_at_the_next_push(svc: Service) -> None:
    # Given a note marked by the sample push before marks kept their push's time (stale_at unset)
    svc.index("acme", [_noted("before", BEFORE), *_normalized(_push())])
    svc.store.patch("acme", {"before": {"possibly_stale": "0" * 40, "stale_at": None}})
    # When a later push to the same path arrives, Then the note's mark is recomputed whole (the
    # earliest later push is the sample one) and keeps its time from now on
    svc.index("acme", _normalized(_push("d" * 40, "2025-12-14T09:00:00Z", ["docs/auth.md"])))
    record = read_one(svc.store, "acme", "before")
    assert record is not None and (record.possibly_stale, record.stale_at) == (
        FIX_SHA,
        datetime(2025, 12, 12, 9, 58, 30, tzinfo=UTC),
    )


WATCHER = "src/app/watchgodreload.py"
TOUCH_SHA = "1" * 40  # a coverage tweak touching the file, first
REMOVE_SHA = "2" * 40  # the change that deleted it, later
NAMING_SHA = "3" * 40  # a later one whose words name the code the note is about


def _change(sha: str, at: str, message: str, *, modified: tuple[str, ...] = (), removed: tuple[str, ...] = ()) -> Any:
    """A push of one commit to the sample repository's default branch."""
    event = _push(sha, at, list(modified))
    detail = event["detail"]
    commit = dict(detail["commits"][-1], message=message, modified=list(modified), removed=list(removed))
    detail["commits"] = [commit]
    detail["head_commit"] = dict(detail["head_commit"], message=message, modified=list(modified), removed=list(removed))
    return _normalized(event)


def _watcher_note(at: datetime = BEFORE) -> Any:
    return note("watcher-note", "How reloading works",
                f"The reloader runs WatchGodReload from {WATCHER} and restarts on any change.",
                occurred_at=at, code_refs=[{"repository": "acme/console", "paths": [WATCHER]}])  # fmt: skip


def test_the_mark_names_the_change_that_removed_what_the_note_is_about_not_a_mere_touch(svc: Service) -> None:
    touch = _change(TOUCH_SHA, "2025-12-12T08:00:00Z", "Raise coverage", modified=(WATCHER,))
    removal = _change(REMOVE_SHA, "2025-12-12T12:00:00Z", "Remove WatchGod (#2536)", removed=(WATCHER,))
    orders = {
        "note, touch, removal": [[_watcher_note()], touch, removal],
        "note, removal, touch": [[_watcher_note()], removal, touch],
        "pushes, then the note": [touch + removal, [_watcher_note()]],
        "removal, note, touch": [removal, [_watcher_note()], touch],
    }
    for n, (order, batches) in enumerate(orders.items()):
        workspace = f"w{n}"
        for batch in batches:
            svc.index(workspace, batch)
        # Then the note is stale because of the removal, whatever the order things arrived in
        assert _stale(svc, "watcher-note", workspace) == REMOVE_SHA, order
    # And its lineage reaches that change, saying why
    timeline = svc.lineage("w0", "watcher-note", 10, "r").timeline
    removal_id = removal[0].id
    assert [entry.id for entry in timeline] == ["watcher-note", removal_id]
    assert [(link.kind, link.key) for link in timeline[1].links] == [("staleBy", REMOVE_SHA)]
    # When the removal goes (a deleted push), Then the touch is what is left to mark it
    svc.delete("w0", removal_id, "r")
    assert _stale(svc, "watcher-note", "w0") == TOUCH_SHA


def test_a_change_naming_the_code_beats_an_earlier_touch_and_the_earliest_of_equals_wins(svc: Service) -> None:
    touch = _change(TOUCH_SHA, "2025-12-12T08:00:00Z", "Raise coverage", modified=(WATCHER,))
    naming = _change(NAMING_SHA, "2025-12-12T10:00:00Z", "Make WatchGodReload skip dotfiles", modified=(WATCHER,))
    later_touch = _change("4" * 40, "2025-12-12T11:00:00Z", "Format", modified=(WATCHER,))
    svc.index("acme", [_watcher_note()])
    svc.index("acme", touch)
    assert _stale(svc, "watcher-note") == TOUCH_SHA  # a touch is all there is so far
    svc.index("acme", later_touch)
    assert _stale(svc, "watcher-note") == TOUCH_SHA  # a later touch is no better
    svc.index("acme", naming)
    assert _stale(svc, "watcher-note") == NAMING_SHA  # it names the code: it beats the touch
    # And a note written after all of them reads the same
    svc.index("acme", [note("again", "How reloading works", "WatchGodReload restarts the server.", occurred_at=BEFORE,
                            code_refs=[{"repository": "acme/console", "paths": [WATCHER]}])])  # fmt: skip
    assert _stale(svc, "again") == NAMING_SHA


def test_fresh_false_lists_only_what_went_stale(svc: Service) -> None:
    # Given a note the sample push made stale, one it did not, and the push itself
    svc.index("acme", [_noted("before", BEFORE), _noted("after", AFTER), *_normalized(_push())])
    everything = _search(svc)
    assert {"before", "after", PUSH_ID} <= set(everything)
    # When searching with fresh false, Then only the stale note comes back; with true, all but it
    assert _search(svc, fresh=False) == {"before": FIX_SHA}
    assert "before" not in _search(svc, fresh=True) and "after" in _search(svc, fresh=True)
