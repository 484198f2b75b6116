"""``import git`` over histories of every shape git allows, built with the git binary itself (commit
objects written byte for byte where only an old or odd git writes them): offsets such as
``+51800``, dates git cannot read, empty names and addresses, Latin-1 messages and paths, record
separators inside messages, octopus merges, empty commits, submodules, a default branch that is
neither main nor master, a shallow clone, a symlinked changelog, a clone of a clone; and a fuzzer
writing random histories of such commits. Then how a long import reads in a log, and a killed one
continuing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from neural_memory.ingest.normalizers import normalize_eventbridge
from neural_memory.local.cli import main
from neural_memory.local.evaluation.history_truth import find_changelog
from neural_memory.local.history.git import GitHistory
from neural_memory.providers import embeddings
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers import hash_cli
from tests.helpers.fakes import HashEmbedder
from tests.helpers.git_repos import commit_file, git, init, raw_commit, squashed_history, write_blob, write_tree

pytestmark = pytest.mark.integration

ODD = "acme/odd"


@pytest.fixture(autouse=True)
def _hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "build_embedder", lambda settings: HashEmbedder())


def _store(data: Path) -> SqliteStore:
    return SqliteStore(Settings(data_dir=data).sqlite_path)


def _odd_history(root: Path) -> dict[str, str]:
    """A history on branch ``trunk`` whose every commit is something git accepts and a careful
    reader trips on."""
    init(root, "trunk")
    readme = write_blob(root, b"hello\n")
    files: dict[bytes, tuple[str, str]] = {b"README": ("100644", readme)}
    shas: dict[str, str] = {}
    # The offset an old git wrote from a bad TZ (psf/requests has one): +518 hours
    shas["offset"] = raw_commit(
        root, write_tree(root, files), [], author=b"Ann Lee <ann@example.org> 1315449530 +51800", message=b"Start\n"
    )
    # No name and no address; paths with a tab and a quote, and one in Latin-1; a Latin-1 message
    files[b'we"ird\tname.py'] = ("100644", write_blob(root, b"x = 1\n"))
    files[b"caf\xe9.py"] = ("100644", write_blob(root, b"y = 2\n"))
    shas["nameless"] = raw_commit(
        root,
        write_tree(root, files),
        [shas["offset"]],
        author=b" <> 1315449600 +0000",
        message=b"R\xe9sum\xe9 parsing (#2)\n\nParses r\xe9sum\xe9s.\n",
    )
    # An empty commit whose message holds the record and field separators, dated as git cannot read
    shas["empty"] = raw_commit(
        root,
        write_tree(root, files),
        [shas["nameless"]],
        author=b"Bo Chen <bo@example.org> 1315449700 junk",
        committer=b"Bo Chen <bo@example.org> 1315449700 -9999",
        message=b"Odd \x1e separators \x1f inside\n",
    )
    # A message in ISO-8859-1 that says so (git re-encodes it)
    shas["latin"] = raw_commit(
        root,
        write_tree(root, files),
        [shas["empty"]],
        author=b"Bo Chen <bo@example.org> 1315449800 +1400",
        message=b"Caf\xe9 au lait (#3)\n",
        encoding=b"ISO-8859-1",
    )
    # An octopus merge of two branches
    sides = []
    for name in (b"a.py", b"b.py"):
        side = {**files, name: ("100644", write_blob(root, name))}
        sides.append(raw_commit(root, write_tree(root, side), [shas["latin"]], message=b"Side " + name + b"\n"))
    files[b"a.py"] = ("100644", write_blob(root, b"a.py"))
    files[b"b.py"] = ("100644", write_blob(root, b"b.py"))
    shas["octopus"] = raw_commit(
        root, write_tree(root, files), [shas["latin"], *sides], message=b"Merge branches 'a' and 'b'\n"
    )
    # A submodule added, then moved on
    files[b"vendor/lib"] = ("160000", shas["offset"])
    shas["submodule"] = raw_commit(root, write_tree(root, files), [shas["octopus"]], message=b"Vendor lib\n")
    files[b"vendor/lib"] = ("160000", shas["nameless"])
    shas["bump"] = raw_commit(  # and no date git can read at all
        root, write_tree(root, files), [shas["submodule"]], author=b"Bo <bo@example.org> junk", message=b"Bump lib\n"
    )
    # A timestamp past any calendar
    shas["far"] = raw_commit(
        root,
        write_tree(root, files),
        [shas["bump"]],
        author=b"Ann Lee <ann@example.org> 99999999999999 +0000",
        committer=b"Ann Lee <ann@example.org> 1315450000 +0000",
        message=b"From the far future\n",
    )
    git(root, "update-ref", "refs/heads/trunk", shas["far"])
    return shas


def test_a_history_of_every_shape_git_allows_imports_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given a history holding all of them, on a branch named trunk
    root = tmp_path / "odd"
    shas = _odd_history(root)
    data = tmp_path / "data"
    # When it is imported (the default branch read from HEAD)
    code = main(["import", "git", str(root), "--repo", ODD, "--workspace", "w", "--data-dir", str(data)])
    # Then every commit is a push and each PR a merged PR, nothing failed or skipped
    out = capsys.readouterr().out
    assert code == 0, out
    assert "10 created, 0 updated, 0 skipped, 0 failed" in out
    store = _store(data)
    try:
        push = {key: f"github-push-acme.odd-{sha[:12]}" for key, sha in shas.items()}
        held = store.read("w", [*push.values(), "github-pr-acme.odd-2-pull_request_merged"])
        # And the +518-hour offset keeps its instant, in UTC
        assert held[push["offset"]].occurred_at == datetime.fromtimestamp(1315449530, UTC)
        assert held[push["offset"]].metadata["branch"] == "trunk"
        # And a nameless author is someone, the Latin-1 message and path are read as Latin-1
        pr = held["github-pr-acme.odd-2-pull_request_merged"]
        assert pr.title == "PR #2 merged: Résumé parsing" and pr.actor_name
        assert f"{ODD}:café.py" in (held[push["nameless"]].code_refs or [])
        # And a date git cannot read takes the committer's (its odd offset: UTC), or the previous commit's
        assert held[push["empty"]].occurred_at == datetime.fromtimestamp(1315449700, UTC)
        assert held[push["bump"]].occurred_at == held[push["submodule"]].occurred_at
        assert "Odd" in held[push["empty"]].content
        assert held[push["far"]].occurred_at == datetime.fromtimestamp(1315450000, UTC)
        # And the submodule's path is a change of the commit that moved it
        assert f"{ODD}:vendor/lib" in (held[push["bump"]].code_refs or [])
    finally:
        store.close()


_OFFSETS = [b"+0000", b"+51800", b"-9999", b"+123456", b"+0060", b"-1260", b"+1", b"junk", b"", b"+05:30", b"-0000"]


def _random_history(root: Path, rng: random.Random, size: int) -> list[tuple[str, int | None]]:
    """``size`` random commits (random parents, offsets, names, messages and paths; any byte but
    NUL where git keeps bytes); each commit's sha and its committer's timestamp (None: git cannot
    read that date)."""
    init(root, "main")
    made: list[tuple[str, int | None]] = []
    files: dict[bytes, tuple[str, str]] = {}
    alphabet = bytes(b for b in range(1, 256) if b not in b"<>\n")
    for n in range(size):
        path = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 12))).replace(b"/", b"_") or b"p"
        if rng.random() < 0.8:
            files[path] = ("100644", write_blob(root, bytes(rng.randrange(1, 256) for _ in range(20))))
        elif files:
            files.pop(rng.choice(sorted(files)))
        parents = [made[-1][0]] if made else []
        if len(made) > 3 and rng.random() < 0.2:
            parents += [sha for sha, _ in rng.sample(made[:-1], rng.randint(1, 3))]
        name = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        email = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        seconds = rng.choice([0, 1315449530 + n, rng.randrange(-(2**31), 2**33), 10**14])
        when = str(seconds).encode() + b" " + rng.choice(_OFFSETS)
        committed = 1315449530 + n * 60
        offset = rng.choice(_OFFSETS)
        message = bytes(rng.randrange(1, 256) for _ in range(rng.randint(0, 60)))
        if rng.random() < 0.3:
            message = b"Merge pull request #%d from someone/branch\n\n" % (n + 1) + message
        elif rng.random() < 0.3:
            message += b" (#%d)" % (n + 1)
        sha = raw_commit(
            root,
            write_tree(root, files),
            parents,
            author=name + b" <" + email + b"> " + when,
            committer=b"C <c@example.org> %d %s" % (committed, offset),
            message=message,
            encoding=rng.choice([None, b"ISO-8859-1", b"UTF-8", b"no-such-encoding"]),
        )
        made.append((sha, committed if offset not in (b"junk", b"") else None))
    git(root, "update-ref", "refs/heads/main", made[-1][0])
    return made


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_reader_survives_random_histories_of_what_git_accepts(tmp_path: Path, seed: int) -> None:
    # Given a random history of commits git accepts (a fuzzer's)
    made = dict(_random_history(tmp_path / "fuzz", random.Random(seed), 40))
    # When it is read as events, Then every one is a webhook's payload its normalizer takes
    history = GitHistory(tmp_path / "fuzz", repo=ODD)
    events = list(history.events())
    assert sum(1 for _, e in events if e["detail-type"] == "push") == len(history.commits())
    for origin, event in events:
        normalized = normalize_eventbridge(event)
        assert normalized.observations or normalized.skipped, origin
    # And every commit's dates are ISO 8601, at the instant git recorded where it can read one
    for commit in history.graph().values():
        datetime.fromisoformat(commit.authored)
        committed = made[commit.sha]
        if committed is not None:
            assert datetime.fromisoformat(commit.committed) == datetime.fromtimestamp(committed, UTC)


def test_a_shallow_clone_imports_what_it_holds_and_says_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a clone of the last two commits of five
    root = init(tmp_path / "full")
    for n in range(5):
        commit_file(root, f"src/m{n}.py", "x", f"Change {n}", at=f"2022-01-1{n}T10:00:00+00:00")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{root}", str(shallow)], check=True)
    boundary = git(shallow, "rev-parse", "HEAD~1")
    data = tmp_path / "data"
    # When it is imported
    code = main(["import", "git", str(shallow), "--repo", ODD, "--workspace", "w", "--data-dir", str(data)])
    # Then its two commits are, and it says the history before them is not there, and how to get it
    captured = capsys.readouterr()
    assert code == 0 and "2 created" in captured.out
    assert "warning: a shallow clone: the history before 2022-01-13 is not in it" in captured.err
    assert "git fetch --unshallow" in captured.err
    # And the oldest commit read is not a push of every file of the tree: its changes are unknown
    store = _store(data)
    try:
        oldest = store.read("w", [f"github-push-acme.odd-{boundary[:12]}"])
        assert oldest[f"github-push-acme.odd-{boundary[:12]}"].code_refs is None
    finally:
        store.close()


def test_eval_history_follows_a_symlinked_changelog(tmp_path: Path) -> None:
    # Given CHANGELOG.md, a link to the release notes in docs/
    root = init(tmp_path / "linked")
    commit_file(root, "docs/release-notes.md", "- Fix the parser for nested tags (#7)\n", "Notes")
    os.symlink("docs/release-notes.md", root / "CHANGELOG.md")
    git(root, "add", "CHANGELOG.md")
    git(root, "commit", "-q", "-m", "Link the changelog")
    history = GitHistory(root, repo=ODD)
    # When eval-history looks for the changelog, Then it reads the notes, not the link's path
    assert find_changelog(history) == ("CHANGELOG.md", "- Fix the parser for nested tags (#7)\n")
    # And a link out of the tree is no changelog
    (root / "CHANGELOG.md").unlink()
    os.symlink("/etc/hostname", root / "CHANGELOG.md")
    git(root, "add", "CHANGELOG.md")
    git(root, "commit", "-q", "-m", "Link out")
    assert find_changelog(history) == ("docs/release-notes.md", "- Fix the parser for nested tags (#7)\n")


def test_the_readmes_import_works_on_a_clone_whose_origin_is_a_local_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a repository whose project file links to its GitHub home, and a clone of it
    upstream = init(tmp_path / "upstream")
    pyproject = (
        '[project.urls]\nSource = "https://github.com/acme/web"\nIssues = "https://github.com/acme/web/issues"\n'
    )
    commit_file(upstream, "pyproject.toml", pyproject, "Add project")
    commit_file(upstream, "README.md", "See https://github.com/psf/black for style.\n", "Readme")
    clone = tmp_path / "web"
    subprocess.run(["git", "clone", "-q", str(upstream), str(clone)], check=True)
    data = tmp_path / "data"
    # When the README's command is run as written (no --repo)
    assert main(["import", "git", str(clone), "--workspace", "acme", "--data-dir", str(data)]) == 0
    # Then the repository is the one its files link to, and the command says how it knew
    captured = capsys.readouterr()
    assert "note: repository acme/web: no remote is on GitHub, and pyproject.toml links to it" in captured.err
    assert "importing acme/web (main)" in captured.err and "2 created" in captured.out
    # And a clone of a clone of a GitHub repository takes the GitHub remote two hops away
    git(upstream, "remote", "add", "origin", "git@github.com:acme/console.git")
    again = tmp_path / "again"
    subprocess.run(["git", "clone", "-q", str(clone), str(again)], check=True)
    git(clone, "remote", "set-url", "origin", str(upstream))
    assert GitHistory(again).repo == "acme/console"
    # And a clone nothing names is imported as local/<folder>, with a warning saying what to pass
    bare = init(tmp_path / "tools")
    commit_file(bare, "run.py", "x", "Add runner")
    assert main(["import", "git", str(bare), "--workspace", "t", "--data-dir", str(data)]) == 0
    err = capsys.readouterr().err
    assert "importing it as local/tools; give --repo owner/name" in err


def test_a_long_import_says_how_far_it_is_in_a_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given 200 squashed PRs (400 events), and a log written at every batch (standard error is no terminal)
    from neural_memory.local.history import progress

    root = tmp_path / "long"
    squashed_history(root, 200, "Change the parser, part {n}")
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)
    data = tmp_path / "data"
    # When it is imported
    assert main(["import", "git", str(root), "--repo", ODD, "--workspace", "w", "--data-dir", str(data)]) == 0
    # Then the log says how far, how fast and how long is left, and at the end the peak memory
    err = capsys.readouterr().err
    assert "read in " in err and ": 400 events (200 commits in all)" in err
    assert "importing: 256 of 400 events (64.0 %), " in err and " events/s, about " in err and " left" in err
    assert "imported 400 of 400 events (100.0 %), " in err and "; peak memory " in err


def test_an_import_killed_midway_continues_after_the_last_commit_it_wrote(tmp_path: Path) -> None:
    # Given 600 squashed PRs (1,200 events), imported by a process whose embedding takes a while
    root = tmp_path / "long"
    squashed_history(root, 600, "Change the parser, part {n}")
    data = tmp_path / "data"
    args = ["import", "git", str(root), "--repo", ODD, "--workspace", "w", "--data-dir", str(data)]
    cursor = data / "import-cursors" / "git-acme.odd-main.json"
    slow = subprocess.Popen(
        [*hash_cli.command(16, 1.0), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=Path(__file__).parents[2],
    )
    # When it is killed once its first batches are written
    deadline = time.monotonic() + 120
    while not cursor.exists() and slow.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    slow.send_signal(signal.SIGKILL)
    slow.communicate()
    saved = json.loads(cursor.read_text())["state"]["commit"]
    store = _store(data)
    written = store.count("w")
    store.close()
    assert 0 < written < 1200
    # Then the same command continues after the commit it saved, and ends with every event once
    done = subprocess.run(
        [*hash_cli.command(16), *args], capture_output=True, text=True, cwd=Path(__file__).parents[2], check=False
    )
    assert done.returncode == 0, done.stderr
    assert f"continuing from {cursor}" in done.stderr and "written by the interrupted run, passed over" in done.stderr
    created = int(done.stdout.split(" created")[0].rsplit("\n", 1)[-1])
    assert created <= 1200 - written + 256 and created < 1200, (created, written, saved)
    store = _store(data)
    try:
        assert store.count("w") == 1200
    finally:
        store.close()
    # And a completed import leaves no cursor: the next run reads everything again (an update)
    assert not cursor.exists()


def test_eval_history_passes_over_a_changelog_that_only_points_elsewhere(tmp_path: Path) -> None:
    # Given a top-level CHANGELOG.rst that only says where the changelog is, and the one it names
    root = init(tmp_path / "pointing")
    commit_file(root, "CHANGELOG.rst", "The changelog is at doc/en/changelog.rst.\n", "Point to the changelog")
    commit_file(root, "doc/en/changelog.rst", "- Fix the parser for nested tags (#7)\n", "Changelog")
    # When eval-history looks for the changelog, Then it reads the one citing pull requests
    found = find_changelog(GitHistory(root, repo=ODD))
    assert found == ("doc/en/changelog.rst", "- Fix the parser for nested tags (#7)\n")
