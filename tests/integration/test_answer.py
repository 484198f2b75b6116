"""POST /v1/answer: grounded answers whose every citation is a retrieved observation, with the
quoted span and url — extractive without an LLM, Claude (real SDK, faked wire) with one."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx2
import pytest
from neural_memory.answer.answering import AnthropicAnswerer
from neural_memory.models import AnswerRequest
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.stores.sqlite.store import SqliteStore

from functions.answer import app as answer_app
from functions.observations import app as observations_app
from tests.helpers.events import api_event, load_event
from tests.helpers.fakes import HashEmbedder
from tests.helpers.handlers import call
from tests.helpers.pipeline import NOW, claude_reply

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from neural_memory.local.serving.gateway import LocalLambdaContext
    from neural_memory.settings import Settings

pytestmark = pytest.mark.integration
ENV_QUOTE = "the build read the API base URL from NEXT_PUBLIC_API_URL, which was only set for the preview environment"


def _answerer(respond: Callable[[dict[str, Any]], httpx2.Response], seen: list[dict[str, Any]]) -> AnthropicAnswerer:
    def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        seen.append(body)
        return respond(body)

    return AnthropicAnswerer("k", timeout_s=1.0, http_client=httpx2.Client(transport=httpx2.MockTransport(handle)))


def _tool(answer: str, citations: list[dict[str, str]]) -> httpx2.Response:
    reply = claude_reply()
    reply["content"][0].update(name="answer_with_citations", input={"answer": answer, "citations": citations})
    return httpx2.Response(200, json=reply)


@pytest.fixture
def loaded(settings: Settings, lambda_context: LocalLambdaContext) -> Iterator[Callable[[Any], Service]]:
    def install(answerer: Any = None) -> Service:
        service = Service(
            SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW, answerer=answerer
        )
        set_service(service)
        status, _ = call(observations_app, load_event("api/observations_post"), lambda_context)
        assert status == 200
        return service

    yield install
    set_service(None)


def test_extractive_answer_cites_retrieved_observations(loaded: Any, lambda_context: LocalLambdaContext) -> None:
    # Given the sample observations and no LLM
    loaded()
    # When the sample question arrives
    status, body = call(answer_app, load_event("api/answer_post"), lambda_context)
    # Then the answer quotes the deploy note, and every citation is a retrieved observation with its url
    # (its search reranks as searches do by default: balanced, here fast for want of Cohere)
    assert status == 200 and body["method"] == "extractive"
    assert body["degraded"] == [
        "rerank:balanced->fast (Cohere not configured)",
        "answer:llm->extractive (no LLM configured)",
    ]
    first = body["citations"][0]
    assert first["id"] == "note-deploy-env-vars" and first["url"] == "https://notes.acme.dev/console/deploy-env-vars"
    assert "NEXT_PUBLIC_API_URL" in first["quote"] and first["quote"] in body["answer"]
    assert set(body["latency"]) == {"total", "embed", "retrieval", "llmFilter", "rerank", "generate"}
    assert body["llm"]["bypassed"] and body["llm"]["reason"] == "small_result_set"


def test_an_answer_reranks_as_its_request_asks(loaded: Any, lambda_context: LocalLambdaContext) -> None:
    # Given the sample observations and no Cohere key (balanced falls back to fast, and says so)
    loaded()
    body = json.loads(load_event("api/answer_post")["body"])
    # When the question asks for no rerank, and then for the default
    fast = call(answer_app, api_event("api/answer_post", {**body, "rerank": "fast"}), lambda_context)
    balanced = call(answer_app, api_event("api/answer_post", body), lambda_context)
    # Then the search behind the first reranked nothing, the default's fell back to fast and said so
    assert fast[0] == 200 and not any(d.startswith("rerank:") for d in fast[1]["degraded"])
    assert "rerank:balanced->fast (Cohere not configured)" in balanced[1]["degraded"]
    assert fast[1]["citations"] == balanced[1]["citations"]  # the same results, unreranked either way


def test_llm_answer_keeps_only_citations_grounded_in_retrieved_text(
    loaded: Any, lambda_context: LocalLambdaContext
) -> None:
    # Given Claude answering with one real citation, one invented id and one invented quote
    seen: list[dict[str, Any]] = []
    cited = [
        {"id": "note-deploy-env-vars", "quote": ENV_QUOTE},
        {"id": "obs-that-does-not-exist", "quote": "anything"},
        {"id": "decision-session-refresh-edge", "quote": "a sentence that is not in the source"},
    ]
    loaded(_answerer(lambda body: _tool("NEXT_PUBLIC_API_URL was missing in production.", cited), seen))
    # When asked
    status, body = call(answer_app, load_event("api/answer_post"), lambda_context)
    # Then the answer is Claude's, and only the grounded citation survives
    assert status == 200 and body["method"] == "llm"
    assert body["answer"] == "NEXT_PUBLIC_API_URL was missing in production."
    assert [c["id"] for c in body["citations"]] == ["note-deploy-env-vars"]
    assert body["citations"][0]["url"] == "https://notes.acme.dev/console/deploy-env-vars"
    # And the sources went in as data after the instructions, with the tool forced
    assert seen[0]["tool_choice"] == {"type": "tool", "name": "answer_with_citations"}
    assert "untrusted data" in seen[0]["system"] and "Sources, as JSON data" in seen[0]["messages"][0]["content"]


@pytest.mark.parametrize(
    ("respond", "reason"),
    [
        (lambda body: httpx2.Response(500, json={"type": "error", "error": {"type": "api_error"}}),
         "InternalServerError"),
        (lambda body: _tool("Made up.", [{"id": "nope", "quote": "x"}]), "no citation matched"),
        (lambda body: httpx2.Response(200, json=claude_reply(content=[{"type": "text", "text": "hi"}])),
         "malformed reply"),
    ],
    ids=["500", "ungrounded", "no-tool-call"],
)  # fmt: skip
def test_llm_failures_fall_back_to_the_extractive_answer(
    loaded: Any, lambda_context: LocalLambdaContext, respond: Any, reason: str
) -> None:
    loaded(_answerer(respond, []))
    status, body = call(answer_app, load_event("api/answer_post"), lambda_context)
    assert status == 200 and body["method"] == "extractive"
    rerank, answer = body["degraded"]
    assert rerank == "rerank:balanced->fast (Cohere not configured)"
    assert answer.startswith("answer:llm->extractive") and reason in answer
    assert body["citations"][0]["id"] == "note-deploy-env-vars"


def test_no_match_answers_plainly_without_citations(loaded: Any) -> None:
    service = loaded()
    reply = service.answer("empty", AnswerRequest.model_validate({"question": "anything"}), "r")
    assert reply.citations == [] and reply.answer.startswith("No stored observation")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"question": " "}, "question"),
        ({"question": "q", "topK": 21}, "topK"),
        ({"question": "q", "rerank": "best"}, "rerank"),
    ],
)
def test_bad_answer_input_is_a_400_naming_the_field(
    loaded: Any, lambda_context: LocalLambdaContext, body: dict[str, Any], field: str
) -> None:
    loaded()
    status, reply = call(answer_app, api_event("api/answer_post", body), lambda_context)
    assert status == 400 and reply["error"]["details"][0]["field"] == field


def _merged_pr(number: int, title: str, body: str, at: str, messages: list[str], files: list[str]) -> Any:
    """A merged pull request as ``import git`` delivers it (its commits' messages and files)."""
    from neural_memory.ingest.normalizers import normalize_eventbridge

    pull = {"number": number, "title": title, "body": body, "merged": True, "merged_at": at, "created_at": at,
            "merge_commit_sha": f"{number:040d}", "html_url": f"https://github.com/acme/reloader/pull/{number}",
            "user": {"login": "alice"}, "base": {"ref": "main"}, "head": {"ref": "watchfiles"}}  # fmt: skip
    payload = {
        "action": "closed", "repository": {"full_name": "acme/reloader"}, "sender": {"login": "bob"},
        "pull_request": pull,
        "import": {"mergedBy": "bob", "commits": len(messages), "commitMessages": messages, "files": files,
                   "definitions": ["WatchFilesReload", "should_restart"]},
    }  # fmt: skip
    event = {"source": "github", "detail-type": "pull_request", "time": at, "detail": payload}
    return normalize_eventbridge(event).observations


def test_an_extractive_answer_reads_as_an_answer_and_never_quotes_a_trailer_or_a_file_list(settings: Settings) -> None:
    # Given two merged PRs whose text carries trailers, a commit list, changed code and files
    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    body = ("Replace watchgod with watchfiles for the reloader.\nIt uses less CPU on large trees.\n\n"
            "Co-authored-by: Carol <carol@example.com>\nSigned-off-by: Alice <alice@example.com>")  # fmt: skip
    messages = ["Use watchfiles\n\nSigned-off-by: Alice <alice@example.com>", "Fix the reload tests"]
    files = ["reloader/watchfilesreload.py", "reloader/watchgodreload.py", "tests/test_reload.py"]
    service.index("acme", _merged_pr(1437, "Switch the reloader to watchfiles", body, "2022-06-01T10:00:00Z",
                                     messages, files))  # fmt: skip
    service.index("acme", _merged_pr(1501, "Reload on changes to config files", "Co-authored-by: Dan <d@example.com>",
                                     "2022-08-01T10:00:00Z", ["Watch yaml"], ["reloader/config.py"]))  # fmt: skip
    # When asked why the reloader changed, without an LLM
    reply = service.answer("acme", AnswerRequest.model_validate({"question": "Why did the reloader change?"}), "r")
    # Then it answers in sentences from the records: which PR, its title, who, when, its own first line
    assert reply.method == "extractive"
    assert "PR #1437 “Switch the reloader to watchfiles” by alice, merged 2022-06-01: " in reply.answer
    assert "Replace watchgod with watchfiles for the reloader. [1]" in reply.answer
    assert reply.citations[0].quote == "Replace watchgod with watchfiles for the reloader."
    # And no trailer, commit list, changed code or file list is quoted anywhere
    quoted = reply.answer + " ".join(c.quote for c in reply.citations)
    for noise in ("Co-authored-by", "Signed-off-by", "Commits:", "Changed code:", "Files:", "watchgodreload.py",
                  "- Use watchfiles", "carol@example.com"):  # fmt: skip
        assert noise not in quoted, noise
    # And the second PR, whose text is only a trailer, is named by its record alone
    assert "PR #1501 “Reload on changes to config files” by alice, merged 2022-08-01. [2]" in reply.answer


def test_an_extractive_answer_says_when_nothing_stored_is_about_the_question(loaded: Any) -> None:
    service = loaded()
    # When the question is about something no observation mentions
    reply = service.answer("acme", AnswerRequest.model_validate({"question": "Why did we adopt Kubernetes?"}), "r")
    # Then it says the memory holds nothing on it, and cites nothing
    assert reply.citations == []
    assert reply.answer.startswith("Nothing stored answers this") and "adopt or Kubernetes" in reply.answer
