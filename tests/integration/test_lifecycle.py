"""The tier lifecycle on both stores (issue 26, item 3): promotion C -> A by an API key (who and
why on the record) or by the citation rule, recurring E observations embedded, old E archived by
the daily maintenance and searched only on request; and ``expand`` (item 4): each result's whole
text, within the reply size limit. Through the service, the local gateway (HTTP) and the AWS
handler's event shape."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from neural_memory.answer.answering import AnthropicAnswerer
from neural_memory.auth.keys import issue_key
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.clock import utcnow
from neural_memory.errors import Conflict, NotFound
from neural_memory.ingest import lifecycle
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.models import AnswerRequest, SearchRequest
from neural_memory.runtime import set_service
from neural_memory.search.expansion import reply_bytes
from neural_memory.service import Service
from neural_memory.stores.base import read_one
from neural_memory.stores.sqlite.store import SqliteStore

from functions.observations import app as observations_app
from functions.search import app as search_app
from tests.helpers.events import api_event, load_event
from tests.helpers.handlers import call
from tests.helpers.pipeline import NOW, claude_reply, note
from tests.helpers.two_stores import svc  # noqa: F401  (the two-store fixture)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.local.serving.gateway import LocalLambdaContext

pytestmark = pytest.mark.integration
WS = "acme"


def turn(obs_id: str, text: str, hours_ago: float = 1, **extra: Any) -> Any:
    """A C observation (a conversation turn)."""
    extra.setdefault("occurred_at", NOW - timedelta(hours=hours_ago))
    return note(obs_id, text, text, observation_type="conversation_turn", **extra)


def failure(obs_id: str, build: int, days_ago: float = 1, text: str = "test_login timed out") -> Any:
    """An E observation: a CI run that failed (its build number and duration vary, its cause not)."""
    content = f"Build {build} failed after {build % 300} s: {text} (https://ci.example.com/runs/{build})"
    occurred = NOW - timedelta(days=days_ago)
    return note(obs_id, f"CI run {build} failed", content, observation_type="ci_run", occurred_at=occurred)


def with_settings(service: Service, clock: Any = None, answerer: Any = None, **settings: Any) -> Service:
    """The same store and embedder under other settings (or another clock)."""
    changed = service.settings.model_copy(update=settings)
    return Service(service.store, service.embedder, changed, clock=clock or (lambda: NOW), answerer=answerer)


def found(service: Service, query: str, **fields: Any) -> dict[str, Any]:
    """The results of a keyword search, by id."""
    body = {"query": query, "topK": 50, "mode": "keyword", "llmFilter": False, **fields}
    return {r.id: r for r in service.search(WS, SearchRequest.model_validate(body), "r").results}


# --------------------------------------------------------------------------- promotion


def test_a_promoted_observation_is_kept_for_good_with_who_and_why(svc: Service) -> None:  # noqa: F811
    # Given two C turns about the retry policy
    svc.index(WS, [turn("c1", "retry policy: back off on 429"), turn("c2", "retry policy draft, maybe")])
    assert svc.get(WS, "c1", "r").expires_at == NOW - timedelta(hours=1) + timedelta(days=7)
    # When one is promoted
    out = svc.promote(WS, "c1", "every client follows it", "key:3f9a1c0b7e42", "r")
    # Then it is A, never expires, and says who promoted it, when and why, as GET reads it too
    assert (out.tier, out.expires_at, out.promoted_at) == ("A", None, NOW)
    assert (out.promoted_by, out.promotion_reason) == ("key:3f9a1c0b7e42", "every client follows it")
    assert svc.get(WS, "c1", "r") == out
    assert found(svc, "retry policy")["c1"].tier == "A"
    # And a month later the other turn has expired and is purged, while the promoted one stays found
    later = with_settings(svc, clock=lambda: NOW + timedelta(days=30))
    assert later.purge_expired(NOW + timedelta(days=30)) == 1
    assert set(found(later, "retry policy")) == {"c1"}


def test_only_a_live_c_observation_of_the_workspace_is_promoted(svc: Service) -> None:  # noqa: F811
    svc.index(WS, [turn("c1", "retry policy"), turn("old", "old retry talk", hours_ago=24 * 8)])
    svc.index(WS, [note("a1", "decision: retry with jitter"), failure("e1", 4121)])
    svc.index("rival", [turn("theirs", "rival retry policy")])
    # Another workspace's id, or none, is not found
    for observation_id in ("theirs", "missing"):
        with pytest.raises(NotFound):
            svc.promote(WS, observation_id, "why", "key:k", "r")
    # A and E are refused naming the tier; an expired C naming its expiry
    with pytest.raises(Conflict, match="is tier A: only C observations are promoted"):
        svc.promote(WS, "a1", "why", "key:k", "r")
    with pytest.raises(Conflict, match="is tier E"):
        svc.promote(WS, "e1", "why", "key:k", "r")
    with pytest.raises(Conflict, match="expired at"):
        svc.promote(WS, "old", "why", "key:k", "r")
    # And a promoted one names who promoted it when asked again
    svc.promote(WS, "c1", "why", "key:first", "r")
    with pytest.raises(Conflict, match=r"tier A \(promoted by key:first at"):
        svc.promote(WS, "c1", "again", "key:second", "r")
    assert svc.get("rival", "theirs", "r").tier == "C" and svc.get(WS, "old", "r").tier == "C"


def test_a_repost_keeps_the_promotion_unless_it_names_a_tier(svc: Service) -> None:  # noqa: F811
    svc.index(WS, [turn("c1", "retry policy")])
    svc.promote(WS, "c1", "kept", "key:k", "r")
    # When the source sends the same turn again (an edit), Then it stays promoted
    svc.index(WS, [turn("c1", "retry policy, edited")])
    kept = svc.get(WS, "c1", "r")
    assert (kept.tier, kept.expires_at, kept.promoted_by, kept.content) == ("A", None, "key:k", "retry policy, edited")
    # When a client names the tier itself in a changed post, Then that tier stands, and the record
    # still says who promoted it and why (a demotion by a changed post)
    svc.index(WS, [turn("c1", "retry policy", tier="C")])
    demoted = svc.get(WS, "c1", "r")
    assert (demoted.tier, demoted.promoted_by, demoted.promotion_reason) == ("C", "key:k", "kept")
    assert demoted.expires_at is not None and demoted.promoted_at == NOW


def test_a_replay_naming_the_tier_changes_nothing_on_a_promoted_observation(svc: Service) -> None:  # noqa: F811
    # Given a C turn posted naming its tier, then promoted
    event = turn("c1", "retry policy: back off on 429", tier="C")
    svc.index(WS, [event])
    promoted = svc.promote(WS, "c1", "every client follows it", "key:k", "r")
    # When the very same event is posted again (a redelivery, a replay)
    outcome = svc.index(WS, [event])
    # Then nothing changed: still A, no expiry, who and why kept
    again = svc.get(WS, "c1", "r")
    assert outcome.failed == {} and (again.tier, again.expires_at) == ("A", None)
    assert (again.promoted_at, again.promoted_by, again.promotion_reason) == (
        promoted.promoted_at,
        "key:k",
        "every client follows it",
    )
    assert again == promoted


def _answerer(cite: str, quote: str, calls: list[int]) -> AnthropicAnswerer:
    """Claude (real SDK, faked wire) citing ``cite`` with ``quote``."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        reply = claude_reply()
        tool = {"answer": "Back off on 429.", "citations": [{"id": cite, "quote": quote}]}
        reply["content"][0].update(name="answer_with_citations", input=tool)
        return httpx2.Response(200, json=reply)

    return AnthropicAnswerer("k", timeout_s=1.0, http_client=httpx2.Client(transport=httpx2.MockTransport(handle)))


def test_a_c_observation_cited_by_enough_llm_answers_is_promoted_by_the_rule(svc: Service) -> None:  # noqa: F811
    svc.index(WS, [turn("c1", "The retry policy: back off on 429 with jitter."), note("a1", "retry", "use jitter")])
    calls: list[int] = []
    question = AnswerRequest.model_validate({"question": "what is the retry policy", "topK": 5})
    # Off (the default): an answer counts nothing
    with_settings(svc, answerer=_answerer("c1", "back off on 429", calls)).answer(WS, question, "r")
    assert svc.get(WS, "c1", "r").citations is None
    # On at 2: the first LLM answer citing it counts one, the second promotes it
    rule = with_settings(svc, answerer=_answerer("c1", "back off on 429", calls), promote_after_citations=2)
    first = rule.answer(WS, question, "r")
    assert first.method == "llm" and [c.id for c in first.citations] == ["c1"]
    assert (svc.get(WS, "c1", "r").citations, svc.get(WS, "c1", "r").tier) == (1, "C")
    rule.answer(WS, question, "r")
    promoted = svc.get(WS, "c1", "r")
    assert (promoted.tier, promoted.expires_at, promoted.citations) == ("A", None, 2)
    assert (promoted.promoted_by, promoted.promotion_reason) == ("auto:answers", "cited by 2 answers")
    # And citations of an A observation (or extractive answers) are never counted
    with_settings(svc, answerer=_answerer("a1", "use jitter", calls), promote_after_citations=2).answer(
        WS, question, "r"
    )
    assert svc.get(WS, "a1", "r").citations is None and len(calls) == 4


# --------------------------------------------------------------------------- recurring E


def test_an_e_observation_whose_content_recurs_is_embedded_with_the_earlier_ones(svc: Service) -> None:  # noqa: F811
    service = with_settings(svc, embed_recurring_after=3)
    model = service.embedder.model_id  # type: ignore[union-attr]

    def embedded_at(*ids: str) -> dict[str, Any]:
        """When each was embedded (None: not), checking that exactly those have a vector."""
        vectors = service.store.chunk_vectors(WS, model, [(i, 0) for i in ids])
        marks = {i: service.get(WS, i, "r").embedded_at for i in ids}
        assert {i: (i, 0) in vectors for i in ids} == {i: mark is not None for i, mark in marks.items()}
        return marks

    # Given the same failure twice (other build numbers, durations and links), and once more
    # written again under the same id (a redelivery is no recurrence)
    service.index(WS, [failure("e1", 4121)])
    service.index(WS, [failure("e2", 4122), failure("other", 4122, text="disk full on runner")])
    service.index(WS, [failure("e2", 4122)])
    assert embedded_at("e1", "e2", "other") == {"e1": None, "e2": None, "other": None}
    # When it occurs a third time, Then all three are embedded, and nothing else
    service.index(WS, [failure("e3", 4123)])
    assert embedded_at("e1", "e2", "e3", "other") == {"e1": NOW, "e2": NOW, "e3": NOW, "other": None}
    # And every later occurrence is embedded as it arrives; a redelivery (an hour later) keeps the
    # embedding it had, from when it was embedded
    an_hour_later = NOW + timedelta(hours=1)
    with_settings(service, clock=lambda: an_hour_later).index(WS, [failure("e4", 4124), failure("e1", 4121)])
    assert embedded_at("e1", "e4") == {"e1": NOW, "e4": an_hour_later}
    assert service.get(WS, "e1", "r").tier == "E"
    if isinstance(service.store, SqliteStore):  # osmem has no k-NN: vector search is checked here
        body = {"query": "login test timed out", "mode": "semantic", "llmFilter": False, "collapseDuplicates": False}
        ids = {r.id for r in service.search(WS, SearchRequest.model_validate(body), "r").results}
        assert ids == {"e1", "e2", "e3", "e4"}


def test_recurrence_off_or_without_an_embedder_embeds_nothing(svc: Service) -> None:  # noqa: F811
    service = with_settings(svc, embed_recurring_after=0)
    service.index(WS, [failure(f"e{n}", 4120 + n) for n in range(4)])
    assert all(service.get(WS, f"e{n}", "r").embedded_at is None for n in range(4))


# --------------------------------------------------------------------------- archive


def test_the_daily_maintenance_archives_old_e_observations_and_keeps_them_found(svc: Service) -> None:  # noqa: F811
    old, recent = failure("e-old", 4121, days_ago=40), failure("e-new", 4122, days_ago=2)
    decision = note("a-old", "decision: fail the build on a flaky login", occurred_at=NOW - timedelta(days=40))
    svc.index(WS, [old, recent, decision])
    assert set(found(svc, "build failed login")) == {"e-old", "e-new", "a-old"}  # (loads the search index)
    # When the daily maintenance runs, Then only the old E observation is archived
    assert svc.maintain(NOW) == {"purged": 0, "archived": 1, "unembedded": 0}
    # And a default search still finds it (archiving compacts, it never hides); asked, it is left out
    default = found(svc, "build failed login")
    assert set(default) == {"e-old", "e-new", "a-old"}
    assert default["e-old"].archived_at == NOW and default["e-new"].archived_at is None
    assert "archivedAt" not in default["e-new"].model_dump(by_alias=True)
    assert set(found(svc, "build failed login", includeArchived=False)) == {"e-new", "a-old"}
    # And it is kept, readable, counted by the facets, and archived once
    assert svc.get(WS, "e-old", "r").archived_at == NOW
    assert svc.facets(WS, None, 20, "r").total == 3
    assert svc.maintain(NOW + timedelta(days=1)) == {"purged": 0, "archived": 0, "unembedded": 0}
    # And the same old event delivered again stays archived
    svc.index(WS, [old])
    assert svc.get(WS, "e-old", "r").archived_at == NOW


def test_archiving_drops_the_vectors_a_recurrence_gave(svc: Service) -> None:  # noqa: F811
    # Given the same failure three times 40 days ago: embedded as it recurred
    svc.index(WS, [failure(f"e-{n}", 4121 + n, days_ago=40) for n in range(3)])
    assert all(read_one(svc.store, WS, f"e-{n}").embedded_at is not None for n in range(3))  # type: ignore[union-attr]
    chunks = [(f"e-{n}", 0) for n in range(3)]
    assert svc.embedder is not None and len(svc.store.chunk_vectors(WS, svc.embedder.model_id, chunks)) == 3
    assert lifecycle.vectors_due(svc.store, NOW, 10) == {}
    # When the maintenance archives them, Then their vectors go, once, and they are still found by keyword
    assert svc.maintain(NOW) == {"purged": 0, "archived": 3, "unembedded": 3}
    assert lifecycle.vectors_due(svc.store, NOW, 10) == {}
    assert svc.store.chunk_vectors(WS, svc.embedder.model_id, chunks) == {}
    assert {"e-0", "e-1", "e-2"} <= set(found(svc, "build failed", collapseDuplicates=False))


def test_archiving_off_keeps_every_e_observation_searched(svc: Service) -> None:  # noqa: F811
    svc.index(WS, [failure("e-old", 4121, days_ago=400)])
    assert with_settings(svc, archive_execution_after_days=0).maintain(NOW) == {
        "purged": 0,
        "archived": 0,
        "unembedded": 0,
    }
    assert set(found(svc, "build failed")) == {"e-old"}


def test_the_archive_mark_survives_a_restart_of_the_embedded_store(settings: Any) -> None:
    # Given an archived E observation and a live one in the embedded store
    store = SqliteStore(settings.sqlite_path)
    service = Service(store, None, settings, clock=lambda: NOW)
    service.index(WS, [failure("e-old", 4121, days_ago=40), failure("e-new", 4122, days_ago=2)])
    assert set(found(service, "build failed")) == {"e-old", "e-new"}
    assert service.maintain(NOW)["archived"] == 1
    store.close()  # saves the in-memory index
    # When it is opened again, from the saved index and then rebuilt from SQLite, Then the mark holds
    for saved in (True, False):
        if not saved:
            settings.sqlite_path.with_name("neural-memory.mirror.npz").unlink()
        reopened = SqliteStore(settings.sqlite_path)
        again = Service(reopened, None, settings, clock=lambda: NOW)
        assert set(found(again, "build failed", includeArchived=False)) == {"e-new"}
        assert set(found(again, "build failed")) == {"e-old", "e-new"}
        reopened.close()


# --------------------------------------------------------------------------- expand

LONG = " ".join(
    f"Part {n}: the cache warmed slowly because the loader read every shard twice, so the review asked for one pass."
    for n in range(200)
)


def test_expand_returns_each_result_whole_from_every_chunk(svc: Service) -> None:  # noqa: F811
    # Given a long review (many chunks) and a chat turn searched with its context passage
    svc.index(
        WS,
        [
            note("review", "incident review: cache", LONG),
            note("m1", "Which cache loader do we use?", "Which cache loader do we use?", observation_type="message",
                 session_id="s1", occurred_at=NOW - timedelta(minutes=2)),
            note("m2", "The sharded one.", "The sharded one, since the cache review.", observation_type="message",
                 session_id="s1", occurred_at=NOW - timedelta(minutes=1)),
        ],
    )  # fmt: skip
    assert len(LONG) > 20_000
    # When searched with expand, Then each result carries its whole text, never another turn's
    results = found(svc, "cache review shard", expand="observation")
    assert results["review"].text == LONG and results["review"].text_truncated is False
    assert results["m2"].text == "The sharded one, since the cache review." and not results["m2"].text_truncated
    assert len(results["review"].snippet) <= svc.settings.snippet_chars + 2
    # And without it the reply has neither field
    plain = found(svc, "cache review shard")["review"].model_dump(by_alias=True)
    assert "text" not in plain and "textTruncated" not in plain


def test_expand_cuts_texts_to_keep_the_reply_under_its_limit(
    svc: Service,  # noqa: F811
    lambda_context: LocalLambdaContext,
) -> None:
    # Given three long observations whose texts together exceed a 64 KiB reply (escapes included:
    # quotes, newlines and non-ASCII cost more than a byte each in the Lambda reply)
    text = 'Le cache "chaud" a été lent.\n' * 1000
    svc.index(WS, [note(f"n{n}", f"cache review {n}", f"{n} {text}") for n in range(3)])
    service = with_settings(svc, max_reply_bytes=65_536)
    body = {"query": "cache review", "topK": 3, "mode": "keyword", "llmFilter": False, "expand": "observation"}
    reply = service.search(WS, SearchRequest.model_validate(body), "r")
    # Then the best result is whole, the next is cut, and from then on every one says so
    texts = [(r.id, r.text or "", r.text_truncated) for r in reply.results]
    assert [cut for _, _, cut in texts] == [False, True, True], [(i, len(t), c) for i, t, c in texts]
    assert all(f"{i[1:]} {text}".startswith(t) for i, t, _ in texts)
    assert reply_bytes(reply) <= 65_536 < reply_bytes(reply) + len(text)
    # And the reply the search function returns to Lambda is under the limit as AWS counts it
    set_service(service)
    try:
        event = api_event("api/search_post", body)
        proxy = search_app.lambda_handler(event, lambda_context)
        assert proxy["statusCode"] == 200 and len(json.dumps(proxy)) <= 65_536
        assert [r["textTruncated"] for r in json.loads(proxy["body"])["results"]] == [False, True, True]
    finally:
        set_service(None)


# --------------------------------------------------------------------------- HTTP and the AWS event


@pytest.fixture
def http(svc: Service, tmp_path: Path) -> Iterator[tuple[LocalGateway, dict[str, str]]]:  # noqa: F811
    """The local gateway over ``svc``, with a key of acme and one of rival."""
    keys = SqliteKeyStore(tmp_path / "keys.sqlite3")
    issued = {workspace: issue_key(keys, workspace, utcnow()) for workspace in ("acme", "rival")}
    set_service(svc)
    yield LocalGateway(keys), issued
    set_service(None)
    keys.close()


def _send(gateway: LocalGateway, method: str, path: str, key: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    payload = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    reply = gateway.dispatch(method, path, headers, payload)
    return reply.status, json.loads(reply.body)


def test_promote_over_http_records_the_key_and_is_confined_to_its_workspace(
    svc: Service,  # noqa: F811
    http: tuple[LocalGateway, dict[str, str]],
) -> None:
    gateway, keys = http
    svc.index(WS, [turn("c1", "retry policy"), note("a1", "retry decision"), failure("e1", 4121, days_ago=40)])
    promote = "/v1/observations/c1/promote"
    # Another workspace's key cannot see it: 404, and nothing changes
    status, body = _send(gateway, "POST", promote, keys["rival"], {"reason": "mine now"})
    assert (status, body["error"]["code"]) == (404, "not_found") and svc.get(WS, "c1", "r").tier == "C"
    # Bad input is a 400 naming the field
    for bad, field in (({}, "reason"), ({"reason": "   "}, "reason"), ({"reason": "x" * 501}, "reason"),
                       ({"reason": "ok", "tier": "A"}, "tier"), (b"[1, 2]", "body")):  # fmt: skip
        status, body = _send(gateway, "POST", promote, keys["acme"], bad)
        assert (status, body["error"]["details"][0]["field"]) == (400, field), (bad, body)
    # The key's own workspace promotes it; the record names the key
    status, body = _send(gateway, "POST", promote, keys["acme"], {"reason": "  the policy every client follows "})
    key_id = keys["acme"].split("_")[1]
    assert status == 200 and (body["tier"], body["expiresAt"]) == ("A", None), body
    assert (body["promotedBy"], body["promotionReason"]) == (f"key:{key_id}", "the policy every client follows")
    status, read = _send(gateway, "GET", "/v1/observations/c1", keys["acme"])
    assert status == 200 and read["promotedBy"] == f"key:{key_id}" and "recurrenceKey" not in read
    # Anything but a live C is a 409 naming why
    for observation_id, why in (("c1", "is tier A (promoted by"), ("a1", "is tier A:"), ("e1", "is tier E")):
        status, body = _send(
            gateway, "POST", f"/v1/observations/{observation_id}/promote", keys["acme"], {"reason": "r"}
        )
        assert (status, body["error"]["code"]) == (409, "conflict") and why in body["error"]["message"], body
    # And search takes includeArchived and expand by their API names
    assert svc.maintain(NOW)["archived"] == 1
    query = {"query": "build failed", "mode": "keyword", "includeArchived": True, "expand": "observation"}
    status, body = _send(gateway, "POST", "/v1/search", keys["acme"], query)
    assert status == 200 and body["results"][0]["id"] == "e1", body
    assert body["results"][0]["archivedAt"] and body["results"][0]["text"].startswith("Build 4121 failed")
    status, body = _send(gateway, "POST", "/v1/search", keys["acme"], {**query, "expand": "turn"})
    assert (status, body["error"]["details"][0]["field"]) == (400, "expand"), body


def test_the_promote_event_api_gateway_sends_is_served_by_the_observations_function(
    svc: Service,  # noqa: F811
    lambda_context: LocalLambdaContext,
) -> None:
    # Given the sample observations (the rate-limit turn is C)
    set_service(svc)
    try:
        status, _ = call(observations_app, load_event("api/observations_post"), lambda_context)
        assert status == 200
        # When API Gateway's event for the promote route arrives (the authorizer named the key)
        status, body = call(observations_app, load_event("api/observation_promote"), lambda_context)
    finally:
        set_service(None)
    # Then the turn is A, promoted by that key with the reason sent
    assert status == 200 and (body["id"], body["tier"], body["promotedBy"]) == (
        "conv-rate-limit-429",
        "A",
        "key:3f9a1c0b7e42",
    ), body
    assert body["promotionReason"].startswith("customers keep asking")
