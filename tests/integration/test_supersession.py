"""Supersession on both stores: a replaced observation drops out of search, carries
``supersededBy``, and comes back when what replaced it goes; chains resolve and cycles are refused."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.errors import InvalidInput
from neural_memory.models import SearchRequest

from tests.helpers.handlers import ingest
from tests.helpers.pipeline import NOW, note
from tests.helpers.two_stores import svc  # noqa: F401  (the two-store fixture)

if TYPE_CHECKING:
    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.service import Service

pytestmark = pytest.mark.integration
WS = "acme"


def decision(obs_id: str, hours_ago: int, *supersedes: str) -> Any:
    extra: dict[str, Any] = {"supersedes": list(supersedes)} if supersedes else {}
    return note(obs_id, f"billing decision {obs_id}", occurred_at=NOW - timedelta(hours=hours_ago), **extra)


def found(service: Service, *, include: bool = False) -> dict[str, str | None]:
    """Every billing decision the search returns, with its ``supersededBy``."""
    body = {"query": "billing decision", "topK": 50, "mode": "keyword", "llmFilter": False}
    reply = service.search(WS, SearchRequest.model_validate({**body, "includeSuperseded": include}), "r")
    return {r.id: r.superseded_by for r in reply.results}


def test_a_chain_leaves_only_the_newest_current(svc: Service) -> None:  # noqa: F811
    # Given a decision replaced twice, one write at a time
    svc.index(WS, [decision("a", 3)])
    svc.index(WS, [decision("b", 2, "a")])
    svc.index(WS, [decision("c", 1, "b")])
    # When searching, Then only the newest is current; with includeSuperseded every link shows
    assert found(svc) == {"c": None}
    assert found(svc, include=True) == {"a": "b", "b": "c", "c": None}
    # And reading a replaced one names what replaced it
    assert svc.get(WS, "a", "r").superseded_by == "b"
    assert svc.get(WS, "c", "r").supersedes == ["b"]


def test_an_observation_written_after_its_replacement_is_already_superseded(svc: Service) -> None:  # noqa: F811
    # Given the newer decision arrives first (events out of order)
    svc.index(WS, [decision("new", 1, "old")])
    # When the older one arrives, Then it is superseded at once
    svc.index(WS, [decision("old", 5)])
    assert found(svc) == {"new": None}
    # And rewriting it (a redelivery) keeps the mark
    svc.index(WS, [decision("old", 5)])
    assert found(svc, include=True) == {"new": None, "old": "new"}


def test_links_inside_one_batch(svc: Service) -> None:  # noqa: F811
    # Given the old and the new decision in the same batch, the new one first
    svc.index(WS, [decision("b", 1, "a"), decision("a", 2)])
    # Then the old one is superseded
    assert found(svc, include=True) == {"a": "b", "b": None}


def test_rewriting_without_a_link_or_deleting_restores_the_old_one(svc: Service) -> None:  # noqa: F811
    # Given a -> b -> c
    svc.index(WS, [decision("a", 3), decision("b", 2, "a"), decision("c", 1, "b")])
    assert found(svc) == {"c": None}
    # When c is deleted, Then b is current again (a stays replaced by b)
    svc.delete(WS, "c", "r")
    assert found(svc) == {"b": None}
    # When b is rewritten without its link, Then a is current again
    svc.index(WS, [decision("b", 2)])
    assert found(svc) == {"a": None, "b": None}


def test_a_target_two_observations_replace_stays_replaced_until_both_go(svc: Service) -> None:  # noqa: F811
    # Given a replaced by b and by c
    svc.index(WS, [decision("a", 3), decision("b", 2, "a"), decision("c", 1, "a")])
    assert set(found(svc)) == {"b", "c"}
    # When one of them is deleted, Then a is still replaced (by the other)
    svc.delete(WS, "c", "r")
    assert found(svc, include=True) == {"a": "b", "b": None}


@pytest.mark.parametrize(
    ("stored", "batch", "chain"),
    [
        ([decision("a", 2, "b")], [decision("b", 1, "a")], "b -> a -> b"),
        ([], [decision("x", 2, "y"), decision("y", 1, "x")], "x -> y -> x"),
        ([decision("b", 2, "c"), decision("c", 3, "a")], [decision("a", 1, "b")], "a -> b -> c -> a"),
    ],
    ids=["with a stored one", "inside the batch", "three long"],
)
def test_cycles_are_refused_and_nothing_is_written(
    svc: Service,  # noqa: F811
    stored: list[Any],
    batch: list[Any],
    chain: str,
) -> None:
    # Given links that would close a cycle
    if stored:
        svc.index(WS, stored)
    before = svc.store.count(WS)
    # When the batch is written, Then it is refused, naming the field and the cycle
    with pytest.raises(InvalidInput) as refused:
        svc.index(WS, batch)
    assert refused.value.field == "observations.0.supersedes"
    assert chain in refused.value.message
    assert svc.store.count(WS) == before


def test_a_cycle_is_a_400_over_http(service: Service, lambda_context: LocalLambdaContext) -> None:
    # Given a stored decision that replaces another
    first = decision("a", 2, "b").model_dump(mode="json", by_alias=True, exclude_none=True)
    assert ingest({"observations": [first]}, lambda_context)[0] == 200
    # When the other one claims to replace it, or itself
    second = decision("b", 1, "a").model_dump(mode="json", by_alias=True, exclude_none=True)
    status, body = ingest({"observations": [second]}, lambda_context)
    itself = {**second, "supersedes": ["b"]}
    status_self, body_self = ingest({"observations": [itself]}, lambda_context)
    # Then both are 400s naming the field
    assert status == 400 and body["error"]["details"][0]["field"] == "observations.0.supersedes", body
    assert status_self == 400 and body_self["error"]["details"][0]["field"] == "observations.0.supersedes", body_self


def test_only_the_last_copy_of_an_id_in_a_batch_links(svc: Service) -> None:  # noqa: F811
    # Given a stored decision, and a batch that writes a twice: first replacing b, then not
    svc.index(WS, [decision("b", 3)])
    svc.index(WS, [decision("a", 1, "b"), decision("a", 1)])
    # Then a as written (the last copy) replaces nothing, and b stays current
    assert found(svc) == {"a": None, "b": None}


def test_a_target_stays_replaced_while_any_observation_still_replaces_it(svc: Service) -> None:  # noqa: F811
    # Given b replaced by x and by y (y the later)
    svc.index(WS, [decision("b", 5), decision("x", 2, "b"), decision("y", 1, "b")])
    assert found(svc, include=True)["b"] == "y"
    # When b and y are rewritten together, y no longer replacing b
    svc.index(WS, [decision("b", 5), decision("y", 1)])
    # Then b is still replaced, by x
    assert found(svc, include=True) == {"b": "x", "x": None, "y": None}


def test_a_long_chain_of_versions_is_accepted_one_write_at_a_time(svc: Service) -> None:  # noqa: F811
    # Given forty versions of a decision, each written on its own and replacing the previous
    for n in range(40):
        svc.index(WS, [decision(f"v{n}", 100 - n, *([f"v{n - 1}"] if n else []))])
    # Then only the newest is current
    assert found(svc) == {"v39": None}


def test_an_expired_replacement_releases_what_it_replaced_when_purged(svc: Service) -> None:  # noqa: F811
    # Given a lasting decision replaced by a chat turn (C tier: it expires 7 days after it occurred)
    turn = note(
        "turn", "billing decision turn", observation_type="conversation_turn", occurred_at=NOW - timedelta(days=1),
        supersedes=["a"],
    )  # fmt: skip
    svc.index(WS, [decision("a", 48), turn])
    assert found(svc, include=True)["a"] == "turn"
    # When the turn has expired and the store is purged
    later = NOW + timedelta(days=10)
    assert svc.purge_expired(later) == 1
    # Then the decision is current again
    assert svc.get(WS, "a", "r").superseded_by is None
    assert found(svc) == {"a": None}


def test_every_chunk_of_a_long_replaced_observation_drops_out(
    svc: Service,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from neural_memory.stores.opensearch import patches as opensearch_patches
    from neural_memory.stores.opensearch import store as opensearch

    # Given OpenSearch reading the chunks to mark a few at a time, and a long decision (passages
    # and lexical windows: far more chunks than one page)
    monkeypatch.setattr(opensearch, "MARK_PAGE", 3)
    monkeypatch.setattr(opensearch_patches, "MARK_PAGE", 3)
    body = " ".join(f"Clause {i}: the billing decision holds for region {i}." for i in range(120))
    svc.index(WS, [note("long", "billing decision long", body, occurred_at=NOW - timedelta(hours=2))])
    # When a newer decision replaces it, Then no chunk of it is found by either retriever
    svc.index(WS, [decision("new", 1, "long")])
    assert found(svc) == {"new": None}
    hybrid = SearchRequest.model_validate({"query": "billing decision region", "topK": 50, "llmFilter": False})
    assert [r.id for r in svc.search(WS, hybrid, "r").results] == ["new"]
    assert found(svc, include=True) == {"long": "new", "new": None}


def test_a_write_whose_marks_fail_after_it_is_stored_says_what_was_stored_and_a_retry_completes_it(
    service: Service, lambda_context: LocalLambdaContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a stored decision, and a store whose next supersession write fails (after the
    # observations themselves are committed)
    old = decision("old", 2).model_dump(mode="json", by_alias=True, exclude_none=True)
    assert ingest({"observations": [old]}, lambda_context)[0] == 200
    real = service.store.patch
    failures = iter([OSError("disk I/O error")])

    def failing_once(workspace_id: str, changes: Any) -> None:
        if (failure := next(failures, None)) is not None:
            raise failure
        real(workspace_id, changes)

    monkeypatch.setattr(service.store, "patch", failing_once)
    # When the newer decision is written
    new = decision("new", 1, "old").model_dump(mode="json", by_alias=True, exclude_none=True)
    status, body = ingest({"observations": [new]}, lambda_context)
    # Then the reply is a retryable 503 naming exactly what was stored (never a bare 500)
    assert status == 503 and body["error"]["code"] == "backend_unavailable", body
    assert "stored 1 observations (new)" in body["error"]["message"], body
    assert service.get(WS, "new", "r").supersedes == ["old"]
    # And the same request again completes it: the old decision is marked replaced
    assert ingest({"observations": [new]}, lambda_context)[0] == 200
    assert service.get(WS, "old", "r").superseded_by == "new"
    assert found(service) == {"new": None}
