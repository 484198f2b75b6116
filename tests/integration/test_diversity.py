"""Duplicates collapsed into the best copy and at most N results per session, on both stores."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.models import ObservationIn, SearchRequest

from tests.helpers.two_stores import svc  # noqa: F401 - the two-store fixture

if TYPE_CHECKING:
    from neural_memory.service import Service

pytestmark = pytest.mark.integration


def _obs(obs_id: str, title: str, content: str, session: str | None = None) -> ObservationIn:
    body: dict[str, Any] = {"id": obs_id, "source": "manual", "observationType": "note", "tier": "A"}
    body |= {"occurredAt": "2025-12-12T10:00:00Z", "title": title, "content": content}
    if session:
        body["sessionId"] = session
    return ObservationIn.model_validate(body)


def _search(service: Service, **fields: Any) -> list[tuple[str, list[str]]]:
    request = SearchRequest.model_validate(
        {"query": "billing lock", "topK": 10, "mode": "keyword", "llmFilter": False, **fields}
    )
    return [(r.id, r.duplicates) for r in service.search("acme", request, "r").results]


def test_copies_collapse_into_the_best_one_which_lists_them(svc: Service) -> None:  # noqa: F811
    # Given the same note three times (once re-formatted) and a different one
    svc.index(
        "acme",
        [
            _obs("a", "Billing lock", "We take an advisory lock before billing runs."),
            _obs("b", "billing LOCK", "We take an  advisory lock, before billing runs!"),
            _obs("c", "Billing lock", "We take an advisory lock before billing runs."),
            _obs("d", "Billing lock timeout", "The billing lock times out after 30 seconds."),
        ],
    )
    # When searching (collapse is on by default)
    results = dict(_search(svc))
    # Then one copy stands for the three, listing the two others, and the different note stays
    (kept,) = [i for i in results if i in {"a", "b", "c"}]
    assert sorted(results[kept]) == sorted({"a", "b", "c"} - {kept}) and results["d"] == []
    # And with collapse off every copy comes back, none listing duplicates
    assert sorted(_search(svc, collapseDuplicates=False)) == [("a", []), ("b", []), ("c", []), ("d", [])]


def test_at_most_n_results_per_session(svc: Service) -> None:  # noqa: F811
    # Given four notes of session s1, two of s2 and one without a session
    notes = [_obs(f"s1-{i}", f"billing lock {i}", f"billing lock step {i}", "s1") for i in range(4)]
    notes += [_obs(f"s2-{i}", f"billing lock other {i}", f"billing lock again {i}", "s2") for i in range(2)]
    notes.append(_obs("free", "billing lock alone", "billing lock with no session"))
    svc.index("acme", notes)
    # When searching with one result per session, and with one result at all
    one_each = [i for i, _ in _search(svc, maxPerSession=1)]
    top_one = _search(svc, maxPerSession=1, topK=1)
    # Then each session gives its best result only, the free note is not capped
    assert sorted(i.split("-")[0] for i in one_each) == ["free", "s1", "s2"]
    assert len(top_one) == 1
    assert len(_search(svc, maxPerSession=3)) == 3 + 2 + 1


def _ranked(service: Service, **fields: Any) -> list[str]:
    return [result_id for result_id, _ in _search(service, **fields)]


def test_near_duplicates_by_vector_collapse_when_a_vector_search_ran(svc: Service) -> None:  # noqa: F811
    # Given a note and the same words in another order (not an exact copy; the same vector)
    svc.index(
        "acme",
        [
            _obs("a", "Billing lock", "We take an advisory lock before billing runs."),
            _obs("b", "Billing lock", "Before billing runs, we take an advisory lock."),
            _obs("d", "Billing lock timeout", "The billing lock times out after 30 seconds."),
        ],
    )
    # When searching in hybrid mode, Then they are one result listing the other
    results = dict(_search(svc, mode="hybrid"))
    (kept,) = [i for i in results if i in {"a", "b"}]
    assert results[kept] == [{"a": "b", "b": "a"}[kept]] and results["d"] == []
    # And keyword mode (no vectors) collapses only exact copies
    assert sorted(i for i, _ in _search(svc)) == ["a", "b", "d"]


TWINS = [
    _obs("first", "billing lock advisory postgres", "billing lock advisory postgres session"),
    _obs("twin", "billing lock advisory postgres", "billing lock advisory postgres session retry backoff"),
    _obs("other", "nightly invoices", "invoices emailed nightly by the cron worker under the billing lock"),
]


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_diversity_trades_a_near_twin_for_a_different_result(svc: Service, mode: str) -> None:  # noqa: F811
    # Given a note, a near twin of it (similar, not a duplicate) and a different note
    svc.index("acme", TWINS)
    plain = _ranked(svc, mode=mode, topK=2)
    assert sorted(plain) == ["first", "twin"], plain
    # When two results are asked for with diversity (cosine in hybrid, word overlap in keyword mode)
    varied = _ranked(svc, mode=mode, topK=2, diversity=0.7)
    # Then the best stays first and the different note takes the second place
    assert varied == [plain[0], "other"]
    # And with topK 1 diversity changes nothing
    assert _ranked(svc, mode=mode, topK=1, diversity=0.7) == plain[:1]


def test_long_near_duplicates_collapse_though_bm25_found_them_by_chunks_without_vectors(
    svc: Service,  # noqa: F811
) -> None:
    # Given two long runbooks, one with a line more: BM25 finds them by their lexical windows,
    # which carry no vector (long content is embedded as passages instead)
    body = " ".join(f"Step {i}: take the billing lock before the nightly run." for i in range(60))
    svc.index("acme", [_obs("a", "Billing lock runbook", body), _obs("b", "Billing lock runbook", body + " Done.")])
    # When searching in hybrid mode, Then their passages' vectors make them one result
    results = dict(_search(svc, mode="hybrid"))
    (kept,) = results
    assert results[kept] == [{"a": "b", "b": "a"}[kept]]


def test_long_documents_sharing_an_opening_are_compared_by_the_passages_that_matched(
    svc: Service,  # noqa: F811
) -> None:
    from neural_memory.stores.sqlite.store import SqliteStore

    if not isinstance(svc.store, SqliteStore):
        pytest.skip("osmem has no k-NN: no passage is found by vector, so openings are compared")
    # Given two long runbooks with the same title and opening, and different endings
    opening = " ".join(f"Step {i}: check the billing lock." for i in range(40))
    kerberos = opening + " " + " ".join(["Then renew the kerberos ticket on every worker host."] * 12)
    postgres = opening + " " + " ".join(["Then vacuum the postgres tables on every replica."] * 12)
    svc.index("acme", [_obs("k", "Runbook", kerberos), _obs("p", "Runbook", postgres)])
    # When a hybrid search matches their endings, Then they are two results, not near-duplicates
    # (their first passages are the same; the passages that matched are not)
    results = dict(_search(svc, mode="hybrid", query="renew kerberos ticket vacuum postgres tables"))
    assert results == {"k": [], "p": []}


def test_observations_found_by_the_same_title_are_not_near_duplicates(svc: Service) -> None:  # noqa: F811
    # Given two merged PRs with one title over different commits: a query that is the title finds
    # both by the passage of their title alone, whose vectors are the same
    title = "PR merged: release version"
    svc.index(
        "acme",
        [
            _obs("v1", title, "Commits:\n- bump the version to 2.2.2\n- changelog for the proxy header fix"),
            _obs("v2", title, "Commits:\n- bump the version to 3.1.1\n- changelog for the multipart parser"),
        ],
    )
    # When searching by the title in hybrid mode, Then they are two results: they open differently
    results = dict(_search(svc, mode="hybrid", query="release version"))
    assert results == {"v1": [], "v2": []}
