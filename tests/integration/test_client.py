"""The typed client (``neural_memory.local.client``) against the real local API over HTTP: every method,
sync and async; every error class; tenancy; retries on 429/503 with Retry-After (only those) and
timeouts, with a real HTTP stand-in for what sits in front of a deployed API."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from neural_memory.local.cli import main
from neural_memory.local.client import (
    ApiError,
    AsyncNeuralMemoryClient,
    ClientConfigurationError,
    NeuralMemoryClient,
    NotFound,
    PayloadTooLarge,
    RetryPolicy,
    ServerError,
    ServiceUnavailable,
    StoreRejected,
    Throttled,
    TransportFailed,
    Unauthenticated,
    ValidationFailed,
)
from neural_memory.models import (
    MAX_CONTENT_CHARS,
    AnswerResponse,
    ObservationIn,
    ObservationOut,
    SearchFilters,
    SearchResponse,
)
from neural_memory.runtime import get_service, set_service
from neural_memory.settings import get_settings

from tests.helpers.events import EVENTS
from tests.helpers.gateway_stand_in import Scripted, running_gateway
from tests.helpers.local_api import RunningApi, running_local_api
from tests.helpers.readme import readme_block

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxLocalEmbedder) -> Iterator[RunningApi]:
    """``make serve`` on a fresh data dir: the demo workspace with the sample events."""
    with running_local_api(tmp_path_factory.mktemp("client"), embedder, EVENTS) as running:
        yield running


def note(observation_id: str, content: str, **fields: Any) -> dict[str, Any]:
    return {"id": observation_id, "source": "manual", "observationType": "note",
            "occurredAt": "2025-12-12T10:00:00Z", "content": content, **fields}  # fmt: skip


def test_search_and_answer_return_the_servers_models(api: RunningApi) -> None:
    with NeuralMemoryClient(api.url, api.key) as client:
        # When the README's search is sent through the client
        reply = client.search("why did the deploy fail", top_k=5)
        # Then it is the server's own reply model, with the sample observations
        assert isinstance(reply, SearchResponse) and len(reply.results) <= 5
        assert "note-deploy-env-vars" in [r.id for r in reply.results]
        # And filters (a model or the API's JSON), mode and any other field reach the server
        as_model = SearchFilters.model_validate({"sourceTypes": ["vercel"]})
        filtered = client.search("deploy failed", filters=as_model, mode="keyword", options={"explain": True})
        assert filtered.results and {r.source for r in filtered.results} == {"vercel"}
        assert all(r.explain for r in filtered.results)
        as_json = client.search("deploy failed", filters={"sourceTypes": ["vercel"]}, mode="keyword")
        assert [r.id for r in as_json.results] == [r.id for r in filtered.results]
        # And an answer cites observations the same search retrieves
        answer = client.answer("Why did the console deploy fail?", top_k=3)
        retrieved = client.search("Why did the console deploy fail?", top_k=3)
    assert isinstance(answer, AnswerResponse) and answer.citations
    assert {c.id for c in answer.citations} <= {r.id for r in retrieved.results}


def test_add_is_batched_and_idempotent_then_get_and_delete(api: RunningApi) -> None:
    # Given 150 observations (the server takes 100 a request), dicts and models mixed
    observations: list[ObservationIn | dict[str, Any]] = [
        note(f"batch-{n:03}", f"Runbook step {n}.") for n in range(149)
    ]
    observations.append(ObservationIn.model_validate(note("batch-149", "Runbook step 149.", title="Last step")))
    with NeuralMemoryClient(api.url, api.key) as client:
        # When added, then added again
        first = client.add(observations)
        again = client.add(observations)
        # Then the batches' replies are one: ids in order, all created, then all updated in place
        assert first.ids == [f"batch-{n:03}" for n in range(150)]
        assert (first.created, first.updated) == (150, 0) and (again.created, again.updated) == (0, 150)
        assert len(first.request_id.split(",")) == 2
        # And one reads back in full, is deleted, and is then not found
        stored = client.get("batch-149")
        assert isinstance(stored, ObservationOut) and (stored.title, stored.content) == (
            "Last step",
            "Runbook step 149.",
        )
        assert client.delete("batch-149").deleted is True
        with pytest.raises(NotFound) as missing:
            client.get("batch-149")
    assert missing.value.status == 404 and missing.value.code == "not_found" and "batch-149" in missing.value.message


def test_the_async_client_does_the_same(api: RunningApi) -> None:
    async def scenario() -> tuple[Any, ...]:
        async with AsyncNeuralMemoryClient(api.url, api.key) as client:
            added = await client.add([note("async-note", "Feature flags are cleaned up every Friday.")])
            found = await client.search("when are feature flags cleaned up", top_k=3)
            answered = await client.answer("When are feature flags cleaned up?")
            stored = await client.get("async-note")
            deleted = await client.delete("async-note")
            try:
                await client.delete("async-note")
            except NotFound as exc:
                return added, found, answered, stored, deleted, exc
            raise AssertionError("deleting twice must be not found")

    added, found, answered, stored, deleted, gone = anyio.run(scenario)
    assert added.ids == ["async-note"] and found.results[0].id == "async-note"
    assert "async-note" in [c.id for c in answered.citations]
    assert stored.content == "Feature flags are cleaned up every Friday." and deleted.deleted
    assert gone.code == "not_found"


def test_facets_count_the_workspace_under_the_filters_sync_and_async(api: RunningApi) -> None:
    with NeuralMemoryClient(api.url, api.key) as client:
        # When the sample workspace's facets are asked for, with no filter and then under one
        everything = client.facets()
        vercel = client.facets(source_types=["vercel"], start="2020-01-01T00:00:00Z", limit=5)
        # Then each field's counts add up to the observations it counts, and a filter narrows the
        # other fields but keeps its own field's alternatives
        sources = {f.value: f.count for f in everything.facets.sources}
        assert {"github", "vercel"} <= set(sources) and sum(sources.values()) == everything.total
        assert vercel.total == sources["vercel"]
        assert {f.value: f.count for f in vercel.facets.sources} == sources
        assert sum(f.count for f in vercel.facets.observation_types) == sources["vercel"]
        # And a bad value is the server's 400 naming the parameter
        with pytest.raises(ValidationFailed) as bad:
            client.facets(tiers=["Z"])
    assert "tiers" in bad.value.message + str(bad.value.details)

    async def asynchronously() -> Any:
        async with AsyncNeuralMemoryClient(api.url, api.key) as client:
            return await client.facets(source_types=["vercel"])

    assert anyio.run(asynchronously).total == sources["vercel"]


def test_every_error_the_server_gives_is_its_typed_exception(api: RunningApi) -> None:
    with NeuralMemoryClient(api.url, api.key) as client:
        # A field out of bounds: 400, naming the field, with the request id
        with pytest.raises(ValidationFailed) as invalid:
            client.search("deploy", top_k=1000)
        error = invalid.value
        assert (error.status, error.code) == (400, "validation_error") and error.request_id
        assert [d.field for d in error.details] == ["topK"] and error.message.startswith("topK:")
        with pytest.raises(ValidationFailed) as nothing:
            client.add([])
        assert nothing.value.details[0].field == "observations"
        with pytest.raises(ValidationFailed) as bad_note:
            client.add([note("bad-url", "x", url="not a url")])
        assert bad_note.value.details[0].field == "observations.0.url"
        # A body over the limit: 413
        large = [note(f"large-{n}", "x" * MAX_CONTENT_CHARS) for n in range(6)]
        with pytest.raises(PayloadTooLarge) as too_large:
            client.add(large)
        assert too_large.value.code == "payload_too_large"
        # No such observation: 404, for get and delete
        with pytest.raises(NotFound):
            client.delete("never-stored")
    # A wrong key: 401
    with (
        NeuralMemoryClient(api.url, "nm_000000000000_" + "A" * 43) as stranger,
        pytest.raises(Unauthenticated) as denied,
    ):
        stranger.search("deploy")
    assert denied.value.code == "unauthorized"
    assert all(isinstance(e, ApiError) for e in (error, too_large.value, denied.value))


def test_a_misconfigured_server_is_service_unavailable_and_not_waited_for(
    api: RunningApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the real server misconfigured (it answers 503 configuration_error, Retry-After: 60)
    service = get_service()
    monkeypatch.setenv("NM_FUSION", "bogus")
    get_settings.cache_clear()
    set_service(None)
    try:
        began = time.monotonic()
        with NeuralMemoryClient(api.url, api.key) as client, pytest.raises(ServiceUnavailable) as unavailable:
            client.search("deploy")
        took = time.monotonic() - began
    finally:
        monkeypatch.delenv("NM_FUSION")
        get_settings.cache_clear()
        set_service(service)
    # Then the error names the setting and says when to retry, and a minute is not waited inside a call
    error = unavailable.value
    assert (error.status, error.code, error.retry_after_s) == (503, "configuration_error", 60.0)
    assert "NM_FUSION" in error.message and took < 5


def test_a_key_never_sees_another_workspace(api: RunningApi) -> None:
    # Given an observation in workspace acme, and a key for workspace rival
    acme, rival = api.key_for("acme"), api.key_for("rival")
    with NeuralMemoryClient(api.url, acme) as ours, NeuralMemoryClient(api.url, rival) as theirs:
        ours.add([note("acme-secret", "The acme launch code word is bluebird.")])
        # When rival searches for it, reads it or deletes it
        assert "acme-secret" not in [r.id for r in theirs.search("launch code word bluebird").results]
        with pytest.raises(NotFound):
            theirs.get("acme-secret")
        with pytest.raises(NotFound):
            theirs.delete("acme-secret")
        # Nor count it: rival's facets are of an empty workspace, acme's hold its note
        assert theirs.facets().total == 0 and theirs.facets().facets.sources == []
        assert ours.facets().total == 1
        # Then acme still has it, and finds it
        assert ours.get("acme-secret").content == "The acme launch code word is bluebird."
        assert ours.search("launch code word bluebird").results[0].id == "acme-secret"
        # And rival's own write of the same id is rival's alone
        theirs.add([note("acme-secret", "Rival's own note.")])
        assert ours.get("acme-secret").content == "The acme launch code word is bluebird."


def test_a_503_with_retry_after_is_retried_after_it(api: RunningApi) -> None:
    # Given a gateway in front of the API that answers one 503 with Retry-After: 1, then forwards
    with running_gateway(api.url) as gateway:
        gateway.script.append(Scripted(503, "backend_unavailable", retry_after="1"))
        with NeuralMemoryClient(gateway.url, api.key) as client:
            # When searching
            reply = client.search("why did the deploy fail")
    # Then the search succeeds on the second request, sent a second after the first
    assert reply.results
    assert len(gateway.received) == 2
    assert gateway.received[1][2] - gateway.received[0][2] >= 1.0


def test_a_delete_answered_503_is_not_retried(api: RunningApi) -> None:
    # Given a gateway answering the next request 503 with Retry-After (the delete may have been applied)
    with running_gateway(api.url) as gateway:
        gateway.script.append(Scripted(503, "backend_unavailable", retry_after="1"))
        # When deleting, Then the 503 is raised at once instead of a retry that could say NotFound
        with NeuralMemoryClient(gateway.url, api.key) as client, pytest.raises(ServiceUnavailable):
            client.delete("note-deploy-env-vars")
    assert len(gateway.received) == 1


def test_a_429_is_retried_with_backoff_by_the_async_client_until_the_retries_are_spent(api: RunningApi) -> None:
    # Given a gateway throttling three times (Retry-After: 0), then four times
    async def scenario(throttles: int, retries: int) -> float:
        with running_gateway(api.url) as gateway:
            gateway.script.extend(Scripted(429, retry_after="0") for _ in range(throttles))
            retry = RetryPolicy(max_retries=retries, backoff_s=0.1)
            async with AsyncNeuralMemoryClient(gateway.url, api.key, retry=retry) as client:
                await client.search("deploy")
            times = [at for _, _, at in gateway.received]
            assert len(times) == throttles + 1
            return times[-1] - times[0]

    # When the client retries up to three times: Then it succeeds, having backed off 0.1 + 0.2 + 0.4 s
    assert anyio.run(scenario, 3, 3) >= 0.7
    # And with two retries allowed it gives up with the throttling error
    with pytest.raises(Throttled) as throttled:
        anyio.run(scenario, 3, 2)
    assert throttled.value.code == "throttled" and throttled.value.retry_after_s == 0.0


@pytest.mark.parametrize(
    ("scripted", "kind"),
    [
        (Scripted(503, "backend_unavailable"), ServiceUnavailable),  # no Retry-After: not retried
        (Scripted(500, "internal_error", retry_after="1"), ServerError),  # not 429/503: never retried
        (Scripted(422, "store_rejected"), StoreRejected),
        (Scripted(503, "backend_unavailable", retry_after="120"), ServiceUnavailable),  # over max_wait_s
        (Scripted(502, body=b"<html>Bad Gateway</html>"), ServerError),  # not the envelope
    ],
)
def test_other_errors_are_raised_at_once(api: RunningApi, scripted: Scripted, kind: type[ApiError]) -> None:
    with running_gateway(api.url) as gateway:
        gateway.script.append(scripted)
        with NeuralMemoryClient(gateway.url, api.key) as client, pytest.raises(kind) as raised:
            client.search("deploy")
        assert len(gateway.received) == 1
    error = raised.value
    assert error.status == scripted.status
    if scripted.body is None:
        assert (error.code, error.message, error.request_id) == (
            scripted.code, f"scripted {scripted.status}", f"gateway-{scripted.status}"
        )  # fmt: skip
    else:
        assert (error.code, error.message) == ("http_error", "<html>Bad Gateway</html>")


def test_a_slow_reply_times_out_and_no_server_is_a_transport_failure(api: RunningApi) -> None:
    with running_gateway(api.url) as gateway:
        gateway.script.append(Scripted(200, delay_s=2.0, body=b"{}"))
        with NeuralMemoryClient(gateway.url, api.key, timeout=0.5) as client, pytest.raises(TransportFailed):
            client.search("deploy")
        unused = gateway.url
    with NeuralMemoryClient(unused, api.key) as client, pytest.raises(TransportFailed):
        client.get("anything")


def test_url_and_key_come_from_the_environment(api: RunningApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NM_API_KEY", raising=False)
    with pytest.raises(ClientConfigurationError, match="NM_API_KEY"):
        NeuralMemoryClient(api.url)
    with pytest.raises(ClientConfigurationError, match="http"):
        NeuralMemoryClient("127.0.0.1:8080", api.key)
    monkeypatch.setenv("NM_API_URL", api.url)
    monkeypatch.setenv("NM_API_KEY", api.key)
    with NeuralMemoryClient() as client:
        assert client.search("deploy").results


def test_cli_search_reaches_a_remote_api_through_the_client(
    api: RunningApi, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # When the CLI searches the running API with --url/--key and filters
    assert main(["search", "deploy failed", "--url", api.url, "--key", api.key, "--source", "vercel", "--json"]) == 0
    reply = SearchResponse.model_validate_json(capsys.readouterr().out)
    # Then the reply is the API's, filters applied
    assert reply.results and {r.source for r in reply.results} == {"vercel"}
    # And the key may come from the environment; human output lists the results
    monkeypatch.setenv("NM_API_KEY", api.key)
    assert main(["search", "why did the deploy fail", "--url", api.url, "--top-k", "2"]) == 0
    assert "2 results in" in capsys.readouterr().out
    # And the API's errors are reported with their code; a workspace flag is refused (the key names it)
    assert main(["search", "deploy", "--url", api.url, "--key", "nm_000000000000_" + "A" * 43]) == 1
    assert "error: unauthorized" in capsys.readouterr().err
    assert main(["search", "deploy", "--url", api.url, "--top-k", "0"]) == 2
    assert "topK" in capsys.readouterr().err
    assert main(["search", "deploy", "--url", api.url, "--workspace", "demo"]) == 2


def test_the_readme_client_example_runs_as_written(api: RunningApi, tmp_path: Path) -> None:
    # Given the README's client example, verbatim, and the environment it reads
    example = readme_block("python", "NeuralMemoryClient")
    environment = {**os.environ, "NM_API_URL": api.url, "NM_API_KEY": api.key}
    # When it runs
    done = subprocess.run([sys.executable, "-c", example], env=environment, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    # Then it added, found, answered from and deleted its note, and then read that it is gone
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "note-rollbacks" in lines[0] and lines[0].split()[1] == "note-rollbacks"
    assert "instant rollback" in done.stdout
    assert lines[-1] == "not_found observation 'note-rollbacks' not found"
    with NeuralMemoryClient(api.url, api.key) as client, pytest.raises(NotFound):
        client.get("note-rollbacks")
