"""One data folder, many processes at once, nothing lost (issue 22, item 3): two ``serve``s, an
agent's ``mcp`` over stdio, ``keys create``/``revoke``, ``ingest``, ``purge`` and writers in a loop
(one of them killed with SIGKILL mid-batch), all on the same embedded store. Black box: real
processes and real files; the database is opened (read only) only once every process has stopped.

Afterwards every acknowledged id is readable and searchable from every process still running,
no reply was a 5xx, no process logged a traceback or an I/O error, the -wal and -shm files were
there for as long as any process held the database, and ``PRAGMA integrity_check`` says ok."""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import TYPE_CHECKING

import pytest

from tests.helpers.mcp_sessions import structured, text_of
from tests.helpers.processes import (
    DATABASE,
    agent_notes,
    batch_word,
    broken,
    call,
    cli,
    http_writer,
    integrity,
    mcp_agent,
    mcp_writer,
    notes,
    start_cli,
    watch_store_files,
    writers,
)
from tests.helpers.serve import Served, serve

if TYPE_CHECKING:
    from pathlib import Path

    from tests.helpers.processes import McpAgent

pytestmark = pytest.mark.integration

WRITE_S = 20  # how long the three writers write at least
WRITTEN = 5  # batches each of them has written, at least, before they are stopped
KILL_AFTER_S = 6  # when the fourth writer is killed mid-batch
INGESTED = 15  # batches of 10 observations in the JSONL file


def _search_ids(served: Served, key: str, word: str) -> list[str]:
    body = {"query": word, "topK": 100, "mode": "keyword", "llmFilter": False}
    status, reply = call(served.url, key, "POST", "/v1/search", body)
    assert status == 200, (served.url, status, reply)
    return [result["id"] for result in reply["results"]]


def _create_key(data: Path, workspace: str) -> str:
    created = cli("keys", "create", "--workspace", workspace, "--data-dir", str(data))
    assert created.returncode == 0, created.stdout + created.stderr
    assert not broken(created.stdout + created.stderr), created.stderr
    return created.stdout.strip().splitlines()[-1]


def _revoke_key(data: Path, key: str) -> None:
    revoked = cli("keys", "revoke", "-", "--data-dir", str(data), stdin=key + "\n")
    assert (revoked.returncode, revoked.stdout.strip()) == (0, "revoked"), revoked.stdout + revoked.stderr


def _a_new_key_works_and_a_revoked_one_does_not(data: Path, servers: list[Served]) -> None:
    """``keys create`` in another process: the key writes and searches at once on every running
    server; ``keys revoke`` in another: it is refused at once (401), and other keys still work."""
    workspace = f"w{time.monotonic_ns() % 10**6}"
    key = _create_key(data, workspace)
    for served in servers:
        word = batch_word("key", 0)
        status, reply = call(served.url, key, "POST", "/v1/observations", {"observations": notes(word, 1)})
        assert status == 200, (served.url, status, reply)
        for other in servers:  # what one server wrote, the other finds
            assert _search_ids(other, key, word) == [f"{word}-0"]
    _revoke_key(data, key)
    for served in servers:
        status, reply = call(served.url, key, "POST", "/v1/search", {"query": "deploy"})
        assert status == 401, (served.url, status, reply)
        status, reply = call(served.url, served.key, "POST", "/v1/search", {"query": "deploy"})
        assert status == 200, (served.url, status, reply)


def _stop_all(servers: list[Served]) -> dict[str, str]:
    """Stop the servers (the last one first), and their output by URL."""
    return {served.url: served.stop() for served in reversed(servers)}


def test_keys_created_and_revoked_by_other_processes_take_effect_at_once_on_two_running_servers(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    # Given a server that has answered an authenticated request, and a second one on the same folder
    with serve(data) as first:
        assert call(first.url, first.key, "POST", "/v1/search", {"query": "deploy", "topK": 3})[0] == 200
        with serve(data, samples=False) as second, watch_store_files(data) as files:
            servers = [first, second]
            # When keys are created and revoked by other processes, again and again
            for _ in range(3):
                # Then each new key works at once on both servers, each revoked key is refused at once
                _a_new_key_works_and_a_revoked_one_does_not(data, servers)
            # And the -wal and -shm files were there all along (both servers hold the database)
            assert files.looks > 10 and not files.missing, files.missing[:5]
            assert not files.loose, files.loose[:5]
            logs = _stop_all(servers)
    # And no server logged a traceback or an I/O error, and the database is whole
    for url, log in logs.items():
        assert not broken(log), (url, broken(log), log[-3000:])
    assert integrity(data / DATABASE) == "ok"


def _jsonl(path: Path, batches: int) -> dict[str, list[str]]:
    """A JSONL file of observations in the API's request shape; batch word → ids."""
    written: dict[str, list[str]] = {}
    with path.open("w") as out:
        for n in range(batches):
            word = batch_word("ingest", n)
            for note in notes(word, 10, observation_type="decision"):
                out.write(json.dumps(note) + "\n")
                written.setdefault(word, []).append(note["id"])
    return written


def _remember(agent: McpAgent, n: int) -> tuple[str, list[str]]:
    """The agent remembers a batch of five notes; its word and the ids the tool acknowledged."""
    word = batch_word("agent", n)
    reply = structured(agent.call("remember", {"observations": agent_notes(word, 5)}))
    assert reply["created"] + reply["updated"] == 5, reply
    return word, list(reply["ids"])


def _readable_everywhere(servers: list[Served], ids: list[str]) -> list[str]:
    """The ids some server does not return (or answers other than 200): none, if all is well."""

    def read(where: tuple[Served, str]) -> str | None:
        served, observation = where
        status, reply = call(served.url, served.key, "GET", f"/v1/observations/{observation}")
        ok = status == 200 and reply.get("id") == observation
        return None if ok else f"{served.url} {observation}: {status} {str(reply)[:200]}"

    with ThreadPoolExecutor(4) as pool:
        return [miss for miss in pool.map(read, [(s, i) for s in servers for i in ids]) if miss]


def _still_serving(servers: list[Served], acknowledged: dict[str, list[str]]) -> None:
    """After another process on the folder stopped: each server still reads and finds (a sample),
    and writes (what it acknowledges joins ``acknowledged``)."""
    sample = list(acknowledged.items())[:: max(1, len(acknowledged) // 10)]
    assert _readable_everywhere(servers, [ids[0] for _, ids in sample]) == []
    for served in servers:
        for word, ids in sample[:3]:
            assert sorted(_search_ids(served, served.key, word)) == sorted(ids), (served.url, word)
        word = batch_word("after", len(acknowledged))
        status, reply = call(served.url, served.key, "POST", "/v1/observations", {"observations": notes(word, 2)})
        assert status == 200, (served.url, status, reply)
        acknowledged[word] = reply["ids"]


def test_two_servers_an_agent_ingest_purge_keys_and_writers_one_killed_lose_no_acknowledged_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The `purge` process below is the one whose count is checked: the servers' own maintenance
    # (a minute after start by default) is kept out of its way, never raced (issue 34, item 8).
    monkeypatch.setenv("NM_MAINTENANCE_FIRST_RUN_S", str(24 * 3600))
    data = tmp_path / "data"
    acknowledged: dict[str, list[str]] = {}  # batch word → the ids whose write was acknowledged
    with ExitStack() as running, ExitStack() as watching, ExitStack() as agent_running:
        # Given a server on a fresh folder that has answered an authenticated request
        first = running.enter_context(serve(data))
        assert call(first.url, first.key, "POST", "/v1/search", {"query": "deploy", "topK": 3})[0] == 200
        files = watching.enter_context(watch_store_files(data))
        # And beside it on the same folder: a second server, and an agent's MCP server over stdio
        second = running.enter_context(serve(data, samples=False))
        servers = [first, second]
        agent = agent_running.enter_context(mcp_agent(data, "demo", tmp_path / "agent-mcp.log"))
        acknowledged.update([_remember(agent, 0)])
        # And observations that expired long ago (C tier), for `purge` to delete
        expired = notes(batch_word("expired", 0), 5, observation_type="pull_request")
        for note in expired:
            note["occurredAt"] = "2025-01-01T00:00:00Z"
        assert call(first.url, first.key, "POST", "/v1/observations", {"observations": expired})[0] == 200

        # When three writers write for WRITE_S and WRITTEN batches each, however slow the machine
        # (batches to each server, and a second agent's MCP server remembering), and a fourth
        # writer (another MCP server) is killed mid-batch
        specs = [http_writer("httpa", first.url, first.key), http_writer("httpb", second.url, second.key)]
        # (the one to be killed writes until it is, however slow a busy machine makes the steps before)
        specs += [mcp_writer("mcpw", data), mcp_writer("mcpk", data, seconds=10 * WRITE_S)]
        started = time.monotonic()
        with writers(specs, 10 * WRITE_S) as run:
            for spec in specs:
                run.wait_for_acks(spec.name, 1)
            # And meanwhile a JSONL file is ingested, keys are created and revoked, expired
            # observations are purged, and the agent remembers, each in its own process
            ingested = _jsonl(tmp_path / "observations.jsonl", INGESTED)
            failures = tmp_path / "ingest-failures.jsonl"
            ingest = start_cli("ingest", str(tmp_path / "observations.jsonl"), "--data-dir", str(data),
                               "--failures", str(failures))  # fmt: skip
            _a_new_key_works_and_a_revoked_one_does_not(data, servers)
            # (under the rule that deletes C past its window: by default they would stay, by their words)
            monkeypatch.setenv("NM_COLLABORATIVE_AFTER_WINDOW", "delete")
            purged = cli("purge", "--data-dir", str(data))
            monkeypatch.delenv("NM_COLLABORATIVE_AFTER_WINDOW")
            done = "purged 5 expired observations; archived 0 E observations; 0 kept without their vectors"
            assert (purged.returncode, purged.stdout.strip()) == (0, done), purged
            for served in servers:  # gone for every process at once
                gone = [call(served.url, served.key, "GET", f"/v1/observations/{n['id']}")[0] for n in expired]
                assert gone == [404] * 5, (served.url, gone)
            assert agent.call("get_memory", {"id": expired[0]["id"]}).is_error
            acknowledged.update([_remember(agent, 1)])
            time.sleep(max(0.0, KILL_AFTER_S - (time.monotonic() - started)))
            run.kill_mid_batch("mcpk")
            _a_new_key_works_and_a_revoked_one_does_not(data, servers)
            acknowledged.update([_remember(agent, 2)])
            ingest_output, _ = ingest.communicate(timeout=300)
            time.sleep(max(0.0, WRITE_S - (time.monotonic() - started)))
            for name in ("httpa", "httpb", "mcpw"):
                run.wait_for_acks(name, WRITTEN)
            run.stop()
            acknowledged.update([_remember(agent, 3)])
        elapsed = time.monotonic() - started
        assert elapsed >= WRITE_S, elapsed

        # Then ingest acknowledged every line it read (its printed count) and failed none
        assert ingest.returncode == 0 and not failures.exists(), ingest_output[-3000:]
        count = re.search(r"(\d+) created, (\d+) updated, 0 skipped, 0 failed", ingest_output)
        assert count and int(count[1]) + int(count[2]) == 10 * INGESTED, ingest_output[-3000:]
        acknowledged.update(ingested)
        # And no writer had a reply other than a success (no 5xx); every one wrote
        for name, writer in run.writers.items():
            assert not writer.errors, (name, writer.errors[:3])
            assert writer.acknowledged, (name, writer.output()[-3000:])
            acknowledged.update(writer.acknowledged)
        killed = run.writers["mcpk"]
        assert killed.killed and killed.process.returncode == -9
        # And the batch it was killed in is stored whole or not at all (one transaction)
        last = killed.events[-1]
        assert "begin" in last
        found = set(_search_ids(first, first.key, last["word"]))
        assert found in (set(), set(last["ids"])), (found, last)

        # And every acknowledged id is readable from both servers
        ids = [observation for batch in acknowledged.values() for observation in batch]
        assert len(ids) == len(set(ids)) > 300, len(ids)
        assert _readable_everywhere(servers, ids) == []
        # And searchable from both servers and the agent's MCP server, by its batch's word
        for word, batch in acknowledged.items():
            for served in servers:
                assert sorted(_search_ids(served, served.key, word)) == sorted(batch), (served.url, word)
            found_by_agent = structured(agent.call("search_memory", {"query": word, "topK": 100, "mode": "keyword"}))
            assert sorted(r["id"] for r in found_by_agent["results"]) == sorted(batch), word
        # And readable by the agent (a sample of every batch: its first id)
        for batch in acknowledged.values():
            assert structured(agent.call("get_memory", {"id": batch[0]}))["id"] == batch[0]
        missing = agent.call("get_memory", {"id": "no-such-memory"})
        assert missing.is_error and "not_found" in text_of(missing)

        # When the processes stop one by one, Then whoever is still running answers as before:
        # both servers once the agent's MCP server stopped, the first once the second stopped
        agent_running.close()
        _still_serving(servers, acknowledged)
        logs = {"second server": second.stop()}
        _still_serving([first], acknowledged)
        # And the -wal and -shm files were there (private) for as long as any process held the database
        watching.close()
        assert files.looks > 100 and not files.missing, files.missing[:5]
        assert not files.loose, files.loose[:5]
        logs["first server"] = first.stop()
    # And no process logged a traceback, an I/O error or a 500
    logs["agent mcp"] = (tmp_path / "agent-mcp.log").read_text()
    logs |= {name: writer.output() for name, writer in run.writers.items()}
    logs |= {"ingest": ingest_output, "purge": purged.stdout + purged.stderr}
    for name, log in logs.items():
        assert not broken(log), (name, broken(log)[:5], log[-3000:])
    # And the database is whole
    assert integrity(data / DATABASE) == "ok"
    # And a server started afresh on the folder reads every acknowledged id, to the last one written
    with serve(data, samples=False) as restarted:
        ids = [observation for batch in acknowledged.values() for observation in batch]
        assert _readable_everywhere([restarted], ids) == []
        assert not broken(restarted.stop())
