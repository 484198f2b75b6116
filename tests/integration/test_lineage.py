"""Why an observation changed (``GET /v1/observations/{id}/lineage``), on both stores:
``lineage.sharing_metadata`` over each store (exact pairs, expiry, order, limit, tenancy), the
supersession chain both ways, the engineering keys the normalizers set, the sample events' failed
deploy, and the route through the local gateway (200, 400 naming the field, 404 across workspaces)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.auth.keys import issue_key
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.clock import utcnow
from neural_memory.engineering.lineage import sharing_metadata
from neural_memory.errors import NotFound
from neural_memory.local.ingest.files import expand, load_file
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.stores.base import read_one
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.events import EVENTS
from tests.helpers.fakes import HashEmbedder
from tests.helpers.pipeline import NOW, note

if TYPE_CHECKING:
    from collections.abc import Iterator

    from neural_memory.models import LineageResponse, ObservationIn
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration

FAILED_DEPLOY = "vercel-dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx-error"
FIX_PUSH = "github-push-acme.console-7f3a9b2c1d0e"
MERGED_PR = "github-pr-acme.console-482-pull_request_merged"
FIX_SHA = "7f3a9b2c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f70"


def samples() -> list[ObservationIn]:
    """Every observation the sample events of ``events/`` yield (what ``serve`` loads)."""
    return [o for path in expand([EVENTS]) for loaded in load_file(path) for o in loaded.observations]


def _links(reply: LineageResponse) -> dict[str, set[tuple[str, str]]]:
    return {entry.id: {(link.kind, link.key) for link in entry.links} for entry in reply.timeline}


# ------------------------------------------------------------------ the store (both)


def test_sharing_metadata_matches_every_pair_of_a_group_exactly_within_the_workspace(svc: Service) -> None:
    # Given observations holding engineering keys, one expired, one superseded, one in another workspace
    svc.index(
        "acme",
        [
            note(
                "pr", "PR 482", metadata={"repo": "acme/console", "number": 482}, occurred_at=NOW - timedelta(hours=3)
            ),
            note("same-number", "other repo", metadata={"repo": "acme/api", "number": 482}),
            note("as-text", "number as text", metadata={"repo": "acme/console", "number": "482"}),
            note("deploy", "deploy", metadata={"commitSha": FIX_SHA}, occurred_at=NOW - timedelta(hours=2)),
            note("old", "expired", metadata={"commitSha": FIX_SHA}, tier="C", occurred_at=NOW - timedelta(days=8)),
            note("v1", "replaced", metadata={"commitSha": FIX_SHA}, occurred_at=NOW - timedelta(hours=5)),
            note("v2", "replacement", supersedes=["v1"]),
        ],
    )
    svc.index("rival", [note("rival", "rival deploy", metadata={"commitSha": FIX_SHA, "number": 482})])
    groups = [(("number", 482), ("repo", "acme/console")), (("commitSha", FIX_SHA),)]
    # When the store is asked for either key
    found = sharing_metadata(svc.store, "acme", groups, NOW, 10)
    # Then both pairs of the first group hold (same type), the expired one is out, the superseded
    # one in, oldest first, and nothing of rival's
    assert [r.id for r in found] == ["v1", "pr", "deploy"]
    assert read_one(svc.store, "acme", "v1").superseded_by == "v2"  # type: ignore[union-attr]
    assert [r.id for r in sharing_metadata(svc.store, "acme", groups, NOW, 2)] == ["v1", "pr"]
    assert [r.id for r in sharing_metadata(svc.store, "rival", groups, NOW, 10)] == ["rival"]
    assert sharing_metadata(svc.store, "nobody", groups, NOW, 10) == []


# ------------------------------------------------------------------ the service (both stores)


def test_the_failed_deploy_reaches_the_pull_request_and_the_fixing_commit(svc: Service) -> None:
    # Given the sample events, and another workspace naming the same commit
    svc.index("acme", samples())
    svc.index("rival", [note("rival-note", "same sha", metadata={"commitSha": FIX_SHA})])
    # When the failed deployment's lineage is asked for
    reply = svc.lineage("acme", FAILED_DEPLOY, 50, "r")
    links = _links(reply)
    # Then it reaches the push whose head it carried and the pull request merged as that commit,
    # and the other events of the same deployment; the later, successful deployment is not linked
    assert ("commit", FIX_SHA) in links[FIX_PUSH]
    assert ("commit", FIX_SHA) in links[MERGED_PR]
    canceled = "vercel-dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx-canceled"  # the same deployment, another state
    assert links[canceled] == {("commit", FIX_SHA), ("deployment", "dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx")}
    assert links[FAILED_DEPLOY] == set() and [e.id for e in reply.timeline if e.subject] == [FAILED_DEPLOY]
    assert "vercel-dpl_3Fq5Rt7Yu9Io1Pa3Sd5Fg7Hj-succeeded" not in links and "rival-note" not in links
    # oldest first: the pull request was merged before the push reached main, then the deploy started
    times = [e.occurred_at for e in reply.timeline]
    assert times == sorted(times)
    assert [e.id for e in reply.timeline].index(MERGED_PR) < [e.id for e in reply.timeline].index(FAILED_DEPLOY)
    assert reply.truncated is False
    # And another workspace cannot trace it
    with pytest.raises(NotFound):
        svc.lineage("rival", FAILED_DEPLOY, 50, "r")


def test_a_comment_and_a_note_link_to_the_pull_request_by_repo_and_number(svc: Service) -> None:
    svc.index("acme", samples())
    svc.index("acme", [note("why-482", "Why we moved refresh", metadata={"repo": "acme/console", "number": 482})])
    links = _links(svc.lineage("acme", MERGED_PR, 50, "r"))
    assert links["why-482"] == {("pullRequest", "acme/console#482")}
    # The issue and its comment share #488, an issue (no pull request on either side)
    issue = _links(svc.lineage("acme", "github-issue-acme.console-488-opened", 50, "r"))
    assert issue["github-comment-acme.console-2547812345"] == {("issue", "acme/console#488")}


def test_the_supersession_chain_is_followed_both_ways(svc: Service) -> None:
    # Given a1 <- a2 <- a3 (each replaces the one before), and b replaced by a3 too
    hour = timedelta(hours=1)
    svc.index(
        "acme",
        [
            note("a1", "first", occurred_at=NOW - 4 * hour),
            note("b", "side", occurred_at=NOW - 4 * hour),
            note("a2", "second", supersedes=["a1"], occurred_at=NOW - 3 * hour),
            note("a3", "third", supersedes=["a2", "b"], occurred_at=NOW - 2 * hour),
        ],
    )
    # When the middle one is traced, Then the older is superseded by it, the newer supersedes it
    assert _links(svc.lineage("acme", "a2", 50, "r")) == {
        "a1": {("supersededBy", "a2")},
        "a2": set(),
        "a3": {("supersedes", "a2")},
    }
    # And from the first, the chain goes on past its direct replacement (b is not on it)
    reply = svc.lineage("acme", "a1", 50, "r")
    assert [e.id for e in reply.timeline] == ["a1", "a2", "a3"]
    assert _links(reply)["a3"] == {("supersedes", "a2")}
    assert reply.timeline[0].superseded_by == "a2"


def test_a_limit_cuts_the_shared_keys_and_says_so(svc: Service) -> None:
    svc.index(
        "acme",
        [
            note(f"n{i}", f"note {i}", metadata={"deploymentId": "dpl_1"}, occurred_at=NOW - timedelta(hours=i))
            for i in range(1, 6)
        ],
    )
    reply = svc.lineage("acme", "n1", 2, "r")
    assert [e.id for e in reply.timeline] == ["n5", "n4", "n1"] and reply.truncated is True
    assert svc.lineage("acme", "n1", 10, "r").truncated is False


# ------------------------------------------------------------------ the route


@pytest.fixture
def gateway(settings: Settings) -> Iterator[tuple[LocalGateway, str, str]]:
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, HashEmbedder(), settings, clock=lambda: NOW)
    service.index("acme", samples())
    set_service(service)
    keys = SqliteKeyStore(settings.sqlite_path)
    yield LocalGateway(keys), issue_key(keys, "acme", utcnow()), issue_key(keys, "rival", utcnow())
    set_service(None)
    store.close()


def test_the_route_answers_refuses_bad_limits_and_keeps_to_the_workspace(
    gateway: tuple[LocalGateway, str, str],
) -> None:
    local, acme, rival = gateway

    def get(path: str, key: str) -> tuple[int, Any]:
        reply = local.dispatch("GET", path, {"Authorization": f"Bearer {key}"}, b"")
        return reply.status, json.loads(reply.body)

    status, body = get(f"/v1/observations/{FAILED_DEPLOY}/lineage?limit=20", acme)
    assert status == 200 and body["id"] == FAILED_DEPLOY
    assert {"kind": "commit", "key": FIX_SHA} in next(e for e in body["timeline"] if e["id"] == MERGED_PR)["links"]
    status, body = get(f"/v1/observations/{FAILED_DEPLOY}/lineage?limit=0", acme)
    assert status == 400 and body["error"]["details"][0]["field"] == "limit"
    assert get(f"/v1/observations/{FAILED_DEPLOY}/lineage", rival)[0] == 404
    assert get("/v1/observations/no-such-id/lineage", acme)[0] == 404
