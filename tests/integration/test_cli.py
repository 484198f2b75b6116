"""The ``neural-memory`` command: keys, ingest (idempotent, with failures reported) and search."""

from __future__ import annotations

import argparse
import io
import json
import re
from typing import TYPE_CHECKING

import pytest
from neural_memory import __version__
from neural_memory.auth.factory import build_key_store
from neural_memory.auth.keys import authenticate
from neural_memory.errors import Unauthorized
from neural_memory.local.cli import main
from neural_memory.local.cli.parser import build_parser
from neural_memory.settings import Settings

from tests.helpers.events import EVENTS

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.integration


def test_keys_create_prints_the_key_last(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "create", "--workspace", "acme", "--data-dir", str(tmp_path)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(r"nm_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", last)


def test_keys_revoke_stops_the_key_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a key made by the CLI
    assert main(["keys", "create", "--workspace", "acme", "--data-dir", str(tmp_path)]) == 0
    key = capsys.readouterr().out.strip().splitlines()[-1]
    keys = build_key_store(Settings(data_dir=tmp_path))
    assert authenticate(keys, key) == "acme"
    # When it is revoked, read from standard input (so it stays out of shell history)
    monkeypatch.setattr("sys.stdin", io.StringIO(key + "\n"))
    assert main(["keys", "revoke", "-", "--data-dir", str(tmp_path)]) == 0
    # Then it no longer authenticates, and revoking it again says so
    with pytest.raises(Unauthorized):
        authenticate(keys, key)
    assert main(["keys", "revoke", key, "--data-dir", str(tmp_path)]) == 1


def test_ingest_twice_keeps_the_same_count_and_search_finds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the sample events folder
    args = ["ingest", str(EVENTS), "--workspace", "acme", "--data-dir", str(tmp_path)]
    args += ["--failures", str(tmp_path / "failures.jsonl")]
    # When ingested twice
    assert main(args) == 1  # the sample of an event type we do not support is reported, every time
    first = capsys.readouterr()
    assert main(args) == 1
    second = capsys.readouterr().out
    # Then the second run only updates, the count is unchanged, and the one failure has its reason
    assert "20 created, 0 updated" in first.out and "1 failed" in first.out and "holds 20 observations" in first.out
    assert "0 created, 20 updated" in second and "holds 20 observations" in second
    assert "github_star_unsupported.json: GitHub event 'star' is not supported" in first.err
    report = (tmp_path / "failures.jsonl").read_text().splitlines()
    assert len(report) == 1 and json.loads(report[0])["document"]["detail-type"] == "star"
    # When searching from the terminal with filters, Then the JSON reply honours them
    assert main(["search", "deploy failed", "--workspace", "acme", "--data-dir", str(tmp_path), "--source", "vercel",
                 "--json"]) == 0  # fmt: skip
    reply = json.loads(capsys.readouterr().out)
    assert [r["source"] for r in reply["results"]] == ["vercel"]


def test_ingest_reports_failures_and_exits_non_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given one good file and two bad ones
    good = tmp_path / "good.json"
    good.write_text((EVENTS / "eventbridge" / "github_push.json").read_text())
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "bad.jsonl").write_text(json.dumps({"observations": [{"title": "no source"}]}) + "\n")
    # When ingested
    report = tmp_path / "db" / "failures.jsonl"
    code = main(["ingest", str(tmp_path), "--workspace", "acme", "--data-dir", str(tmp_path / "db"),
                 "--failures", str(report)])  # fmt: skip
    # Then the good one is indexed, each failure is reported with its reason, and the exit code says so
    captured = capsys.readouterr()
    assert code == 1
    assert "1 created" in captured.out and "2 failed" in captured.out
    assert "broken.json: invalid JSON" in captured.err
    assert "bad.jsonl:1: observations.0.source: Field required" in captured.err
    assert len(report.read_text().splitlines()) == 2
    # When the report is replayed unchanged, Then both fail again and the report keeps them
    assert main(["replay", str(report), "--workspace", "acme", "--data-dir", str(tmp_path / "db")]) == 1
    assert len(report.read_text().splitlines()) == 2


def test_one_poisoned_event_file_is_reported_and_the_others_are_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a folder of valid events and one Vercel event whose createdAt no date has (it crashed
    # the run with a traceback, storing nothing and writing no report)
    events = tmp_path / "events"
    events.mkdir()
    for name in ("github_push", "github_release", "vercel_deployment_error"):
        (events / f"{name}.json").write_text((EVENTS / "eventbridge" / f"{name}.json").read_text())
    poisoned = json.loads((EVENTS / "eventbridge" / "vercel_deployment_succeeded.json").read_text())
    poisoned["detail"]["createdAt"] = 1e30
    (events / "poisoned.json").write_text(json.dumps(poisoned))
    # When the folder is ingested
    report = tmp_path / "failures.jsonl"
    code = main(["ingest", str(events), "--workspace", "acme", "--data-dir", str(tmp_path / "db"),
                 "--failures", str(report)])  # fmt: skip
    # Then the three others are stored, and the poisoned one is the one failure, with its reason
    captured = capsys.readouterr()
    assert code == 1 and "Traceback" not in captured.err
    assert "3 created" in captured.out and "1 failed" in captured.out, captured.out
    assert "poisoned.json: " in captured.err and "createdAt 1e+30 is not a time" in captured.err, captured.err
    assert [json.loads(line)["origin"] for line in report.read_text().splitlines()] == [str(events / "poisoned.json")]


def test_the_data_dir_and_every_file_in_it_are_private(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given a data dir made by the CLI (store, keys, embedding cache, WAL files)
    data = tmp_path / "data"
    assert main(["keys", "create", "--workspace", "acme", "--data-dir", str(data)]) == 0
    args = ["ingest", str(EVENTS / "eventbridge"), "--workspace", "acme", "--data-dir", str(data)]
    main([*args, "--failures", str(tmp_path / "failures.jsonl")])
    capsys.readouterr()
    # Then nobody but the owner can read any of it
    assert (data.stat().st_mode & 0o777) == 0o700
    files = [p for p in data.iterdir() if p.is_file()]
    assert {p.name for p in files} >= {"neural-memory.sqlite3", "embedding-cache.sqlite3"}
    assert {p.name: p.stat().st_mode & 0o777 for p in files} == dict.fromkeys((p.name for p in files), 0o600)


def test_an_existing_shared_folder_is_left_as_it_is_and_the_files_in_it_are_private(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a data dir that already exists, is open to others and holds the user's own files (an
    # empty one is a folder made for the store: tightened, tests/integration/test_data_folder_private.py)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    (shared / "notes.txt").write_text("mine\n")
    # When the CLI keeps its store there, Then the folder keeps its mode and the store is private
    assert main(["keys", "create", "--workspace", "acme", "--data-dir", str(shared)]) == 0
    capsys.readouterr()
    assert (shared.stat().st_mode & 0o777) == 0o755
    assert ((shared / "neural-memory.sqlite3").stat().st_mode & 0o777) == 0o600


def test_backup_and_check_treat_the_folder_mode_like_the_files_modes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a data folder with a store, and an empty backup folder that is open to everyone
    data = tmp_path / "data"
    assert main(["keys", "create", "--workspace", "acme", "--data-dir", str(data)]) == 0
    target = tmp_path / "backup"
    target.mkdir()
    target.chmod(0o777)
    # When backed up into it, Then the folder holding the copies is private like the copies
    assert main(["backup", str(target), "--data-dir", str(data)]) == 0
    assert (target.stat().st_mode & 0o777) == 0o700
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in target.iterdir())
    # When the data folder itself is open to everyone (others could replace the database), Then
    # check names the folder and the fix, instead of saying everything is private
    capsys.readouterr()
    assert main(["check", "--data-dir", str(data)]) == 0
    assert "the folder (0700) and every file (0600) are private" in capsys.readouterr().out
    data.chmod(0o777)
    assert main(["check", "--data-dir", str(data)]) == 1
    out = capsys.readouterr().out
    assert f"the folder {data} (0777)" in out and f"chmod 700 {data}" in out, out


def test_routes_are_managed_checked_and_read_by_serve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from neural_memory.local.cli.common import cli_settings as _settings

    table = tmp_path / "ingest-routes.json"
    # Given routes added with the CLI, and one malformed key refused with the reason
    assert main(["routes", "add", "github:acme/console", "acme", "--file", str(table)]) == 0
    assert main(["routes", "add", "vercel:team_3Qp9kZ2mW8xV1nB4", "acme", "--file", str(table)]) == 0
    assert main(["routes", "add", "acme/console", "acme", "--file", str(table)]) == 2
    assert "github:<owner/repo>" in capsys.readouterr().err
    assert json.loads(table.read_text()) == {"github:acme/console": "acme", "vercel:team_3Qp9kZ2mW8xV1nB4": "acme"}
    # An agent route names its own workspace: one sending acme's agents elsewhere is refused
    assert main(["routes", "add", "neural-memory:acme", "beta", "--file", str(table)]) == 2
    assert "'neural-memory:acme' must route to 'acme'" in capsys.readouterr().err
    assert main(["routes", "add", "neural-memory:acme", "acme", "--file", str(table)]) == 0
    assert main(["routes", "remove", "neural-memory:acme", "--file", str(table)]) == 0
    # When serve starts with that table, Then its settings route by it
    args = argparse.Namespace(command="serve", routes=str(table), data_dir=str(tmp_path))
    assert _settings(args).ingest_routes["github:acme/console"] == "acme"
    # And a route is removed; removing it again says it is not there
    assert main(["routes", "remove", "vercel:team_3Qp9kZ2mW8xV1nB4", "--file", str(table)]) == 0
    assert main(["routes", "remove", "vercel:team_3Qp9kZ2mW8xV1nB4", "--file", str(table)]) == 1
    assert json.loads(table.read_text()) == {"github:acme/console": "acme"}


def _options(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, (*path, name))
        elif not isinstance(action, argparse._HelpAction):
            yield " ".join(path), action


def test_every_option_has_help_and_the_program_is_named_plainly(capsys: pytest.CaptureFixture[str]) -> None:
    # Given the whole command line, When its help is read, Then every option and argument says what it is
    parser = build_parser()
    assert [f"{where} {action.dest}" for where, action in _options(parser) if not action.help] == []
    # And the help names the program as typed, without markup
    parser.print_help()
    shown = capsys.readouterr().out
    assert shown.startswith("usage: neural-memory") and "``" not in shown


def test_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"neural-memory {__version__}"


def test_an_observation_line_missing_fields_names_them_and_can_be_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a JSONL line that is an observation without its observationType and occurredAt
    line = {"id": "n-1", "source": "manual", "title": "Blue-green", "content": "Traffic moves after health checks."}
    (tmp_path / "notes.jsonl").write_text(json.dumps(line) + "\n")
    report = tmp_path / "failures.jsonl"
    args = ["--workspace", "acme", "--data-dir", str(tmp_path / "db")]
    # When ingested
    assert main(["ingest", str(tmp_path / "notes.jsonl"), *args, "--failures", str(report)]) == 1
    # Then the failure names both missing fields, and the report holds the line to fix and replay
    err = capsys.readouterr().err
    assert "observationType: Field required" in err and "occurredAt: Field required" in err, err
    (failure,) = [json.loads(row) for row in report.read_text().splitlines()]
    assert failure["document"] == line, failure
    # When the line is fixed in the report and replayed, Then it is stored
    failure["document"] |= {"observationType": "note", "occurredAt": "2025-12-12T10:00:00Z"}
    report.write_text(json.dumps(failure) + "\n")
    assert main(["replay", str(report), *args]) == 0
