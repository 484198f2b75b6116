"""``neural-memory import git``: the real command, in process, over real git repositories — one the
test builds with the git binary (merge, squash and side-line pull requests, two-year-old dates, an
author under two addresses), and a public repository's clone when this machine has fetched one —
into a data folder's embedded store. The observations are the webhooks' (same ids): importing
twice or a webhook after the import creates nothing new, and old history stays found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.auth.keys import issue_key
from neural_memory.auth.sqlite import SqliteKeyStore
from neural_memory.ingest.normalizers import normalize_eventbridge
from neural_memory.local.cli import main
from neural_memory.local.serving.gateway import LocalGateway
from neural_memory.models import SearchRequest
from neural_memory.providers import embeddings
from neural_memory.runtime import set_service
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.events import NOW, load_event
from tests.helpers.fakes import HashEmbedder
from tests.helpers.git_repos import BO, commit_file, git

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

REPO = "acme/web"
SLUG = "acme.web"
ANN_AT_WORK = ("Ann Lee", "ann@acme.example")
# A public repository this machine may have fetched (the search tool's `fetch`); its test skips otherwise.
FETCHED = Path("/work/.mirror/pallets+werkzeug/repo")


@pytest.fixture(autouse=True)
def _hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's store embeds with the hashing test embedder (fast; the model is not what is tested)."""
    monkeypatch.setattr(embeddings, "build_embedder", lambda settings: HashEmbedder())


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, str]:
    """A history: a first commit, a pull request merged with a merge commit, one squashed, one
    merged into a maintenance branch that was then merged in, one merged with a merge commit titled
    by the pull request, and work by Ann under two addresses."""
    root = tmp_path / "web"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    v1 = "class CookieJar:\n    def get(self, name):\n        return self.values[name]\n\n\n"
    v1 += "def parse(value):\n    return value\n"
    shas = {"first": commit_file(root, "src/app/cookies.py", v1, "Add cookie parsing", at="2022-01-10T10:00:00+00:00")}
    git(root, "checkout", "-q", "-b", "quoted")
    body = "Handle quoted cookie values\n\nA value in double quotes kept its quotes.\n\n"
    body += "Signed-off-by: Bo Chen <bo@example.com>"
    v2 = v1.replace("return value", "return value.strip('\"')") + "\n\ndef unquote(value):\n    return value\n"
    commit_file(root, "src/app/cookies.py", v2, body, who=BO, at="2022-01-20T10:00:00+00:00")
    git(root, "checkout", "-q", "main")
    message = "Merge pull request #7 from bochen/quoted-cookies\n\nHandle quoted cookie values in the parser"
    git(root, "merge", "-q", "--no-ff", "quoted", "-m", message, at="2022-02-01T10:00:00+00:00")
    shas["merge"] = git(root, "rev-parse", "HEAD")
    shas["squash"] = commit_file(
        root, "src/app/formparser.py", "v1", "Stream multipart form data (#9)\n\n* read in chunks",
        who=ANN_AT_WORK, at="2023-03-01T10:00:00+00:00",
    )  # fmt: skip
    git(root, "checkout", "-q", "-b", "stable", shas["merge"])
    shas["side"] = commit_file(
        root, "src/app/headers.py", "v1", "Fix header casing for proxies (#11)", who=BO, at="2023-03-20T10:00:00+00:00"
    )
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "stable", "-m", "Merge branch 'stable'", at="2023-04-01T10:00:00+00:00")
    shas["stable"] = git(root, "rev-parse", "HEAD")
    # GitHub's merge commit titled by the pull request, authored by whoever pressed the button
    expiry = [("Handle cookie expiry", "2023-05-01"), ("Test expiry", "2023-05-02")]
    shas["titled"] = _merged_branch(root, "expiry", expiry, "Expire cookies (#13)", "2023-05-03")
    # Merges of pull requests nobody titled: GitHub named them after the branch, or the one commit
    path = [("Keep the path", "2023-06-01"), ("Test the path", "2023-06-02")]
    untitled = "Merge pull request #15 from bochen/fix-cookie_path"
    shas["branch-named"] = _merged_branch(root, "fix-cookie_path", path, untitled, "2023-06-03")
    domain = [("Match cookie domains exactly", "2023-07-01")]
    untitled = "Merge pull request #17 from bochen/domain"
    shas["commit-named"] = _merged_branch(root, "domain", domain, untitled, "2023-07-03")
    shas["path"] = str(root)
    return shas


def _merged_branch(root: Path, branch: str, commits: list[tuple[str, str]], message: str, day: str) -> str:
    """Bo's ``commits`` (subject, day) on ``branch``, merged into main by Ann with ``message``."""
    git(root, "checkout", "-q", "-b", branch)
    for subject, on in commits:
        commit_file(root, "src/app/cookies.py", subject, subject, who=BO, at=f"{on}T10:00:00+00:00")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", branch, "-m", message, at=f"{day}T10:00:00+00:00")
    return git(root, "rev-parse", "HEAD")


def _push(sha: str) -> str:
    return f"github-push-{SLUG}-{sha[:12]}"


def _pr(number: int) -> str:
    return f"github-pr-{SLUG}-{number}-pull_request_merged"


def _service(data: Path) -> Service:
    settings = Settings(data_dir=data)
    return Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[Service]:
    service = _service(tmp_path / "data")
    set_service(service)
    yield service
    set_service(None)
    service.close()


def test_a_clone_is_imported_as_its_webhooks_would_have_delivered_it(
    repo: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    args = ["import", "git", repo["path"], "--repo", REPO, "--workspace", "acme", "--data-dir", str(data)]
    # When the clone is imported
    assert main([*args, "--failures", str(tmp_path / "failures.jsonl")]) == 0
    assert "13 created, 0 updated, 0 skipped, 0 failed" in capsys.readouterr().out
    service = _service(data)
    try:
        merges = ("first", "merge", "squash", "stable", "titled", "branch-named", "commit-named")
        pushes = {_push(repo[key]) for key in merges}
        prs = {_pr(7), _pr(9), _pr(11), _pr(13), _pr(15), _pr(17)}
        held = service.store.read("acme", sorted(pushes | prs))
        # Then each first-parent commit is a push, each merged PR (merge, squash, side line) a PR
        assert set(held) == pushes | prs and service.store.count("acme") == 13
        merged = held[_pr(7)]
        assert (merged.title, merged.actor_name, merged.tier) == (
            "PR #7 merged: Handle quoted cookie values in the parser",
            "bochen",
            "A",
        )
        assert merged.metadata["commitSha"] == repo["merge"] and merged.metadata["mergedBy"] == "annlee"
        # And what it did is part of it: the commits it merged (what their messages say, without
        # the sign-off) and the paths it changed
        assert (
            "Commits:\n- Handle quoted cookie values\n  A value in double quotes kept its quotes.\n" in merged.content
        )
        assert "Signed-off-by" not in merged.content
        # and the functions its diff changed (edited inside, or defined), not those it left alone
        assert "\nChanged code: parse, unquote\n" in merged.content
        assert "Files: src/app/cookies.py" in merged.content
        assert merged.code_refs == [f"{REPO}:src/app/cookies.py"]
        # And Ann is one actor under both her addresses; the side-line PR is its own author's, and
        # Bo is one actor too: the login of the fork his pull requests came from
        assert {held[p].actor_name for p in (_push(repo["first"]), _push(repo["squash"]))} == {"annlee"}
        assert held[_pr(11)].actor_name == "bochen"
        assert "Fix header casing for proxies (#11)" in held[_push(repo["stable"])].content
        # And a merge titled by its PR is the PR of the branch's author, merged by who pressed merge
        titled = held[_pr(13)]
        assert (titled.title, titled.actor_name, titled.metadata["mergedBy"]) == (
            "PR #13 merged: Expire cookies",
            "bochen",
            "annlee",
        )
        assert "Commits:\n- Handle cookie expiry\n- Test expiry" in titled.content
        # And an untitled one has the title GitHub gave it: its branch's name, or its one commit
        assert held[_pr(15)].title == "PR #15 merged: Fix cookie path"
        assert held[_pr(17)].title == "PR #17 merged: Match cookie domains exactly"
    finally:
        service.close()
    # When it is imported again, Then nothing new is created
    assert main([*args, "--failures", str(tmp_path / "failures.jsonl")]) == 0
    assert "0 created, 13 updated, 0 skipped, 0 failed" in capsys.readouterr().out


def test_a_webhook_after_the_import_updates_and_old_history_stays_found(
    repo: dict[str, str], tmp_path: Path, installed: Service
) -> None:
    args = ["import", "git", repo["path"], "--repo", REPO, "--workspace", "acme", "--data-dir", str(tmp_path / "data")]
    assert main([*args, "--failures", str(tmp_path / "failures.jsonl")]) == 0
    # When GitHub delivers the push of the squash commit (its head) afterwards
    event = load_event("eventbridge/github_push")
    detail = event["detail"]
    detail["repository"] = {**detail["repository"], "full_name": REPO}
    detail["after"] = repo["squash"]
    detail["head_commit"] = {**detail["head_commit"], "id": repo["squash"], "timestamp": "2023-03-01T10:00:00Z"}
    outcome = installed.index("acme", normalize_eventbridge(event).observations)
    # Then it updates the imported push: nothing is added
    assert (outcome.created, outcome.updated) == ([], [_push(repo["squash"])])
    assert installed.store.count("acme") == 13

    # And, years later, a default search finds the old PR by its title and the old push by its
    # commit's subject, and the PR's lineage answers 200 with the push of its commit
    def found(query: str) -> list[str]:
        body = SearchRequest.model_validate({"query": query})
        return [r.id for r in installed.search("acme", body, "r").results]

    assert _pr(7) in found("Handle quoted cookie values in the parser")
    assert _push(repo["first"]) in found("Add cookie parsing")
    keys = SqliteKeyStore(installed.settings.sqlite_path)
    key = issue_key(keys, "acme", NOW)
    reply = LocalGateway(keys).dispatch(
        "GET", f"/v1/observations/{_pr(9)}/lineage", {"Authorization": f"Bearer {key}"}, b""
    )
    assert reply.status == 200, reply.body
    assert [entry["id"] for entry in json.loads(reply.body)["timeline"]] == [_pr(9), _push(repo["squash"])]


@pytest.mark.skipif(not FETCHED.is_dir(), reason=f"no fetched clone at {FETCHED}")
def test_a_public_repositorys_whole_history_imports_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    args = ["import", "git", str(FETCHED), "--repo", "pallets/werkzeug", "--workspace", "w", "--data-dir", str(data)]
    assert main([*args, "--failures", str(tmp_path / "failures.jsonl")]) == 0
    first = capsys.readouterr().out
    created = int(first.split(" created")[0].rsplit("\n", 1)[-1])
    assert created >= 4000 and ", 0 failed" in first, first
    assert main([*args, "--failures", str(tmp_path / "failures.jsonl")]) == 0
    assert f"0 created, {created} updated" in capsys.readouterr().out


def test_a_clone_whose_diffs_cannot_be_read_imports_without_changed_code_and_says_why(
    repo: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a clone missing the object of a file's content (as a partial clone offline is): its
    # trees and paths are there, its diffs are not
    root = Path(repo["path"])
    blob = git(root, "rev-parse", f"{repo['merge']}:src/app/cookies.py")
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    data = tmp_path / "data"
    args = ["import", "git", str(root), "--repo", REPO, "--workspace", "acme", "--data-dir", str(data)]
    # When it is imported, Then every event is, the PRs without their changed code, and it says why
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "13 created, 0 updated, 0 skipped, 0 failed" in captured.out
    assert "warning: no changed code read from the diffs (git log -p: " in captured.err, captured.err
    service = _service(data)
    try:
        merged = service.store.read("acme", [_pr(7)])[_pr(7)]
        assert "Commits:\n- Handle quoted cookie values" in merged.content and "Changed code" not in merged.content
    finally:
        service.close()


def test_the_paths_a_merge_of_the_main_line_brought_count_as_its_changes(repo: dict[str, str]) -> None:
    """The staleness truth of ``eval-history`` reads ``touches``: a merge's paths are what it changed
    against its first parent (git lists none for a merge unless asked)."""
    from neural_memory.local.history.git import GitHistory

    touches = GitHistory(Path(repo["path"]), repo=REPO).touches()
    assert touches[repo["merge"]] == ["src/app/cookies.py"]
    assert touches[repo["stable"]] == ["src/app/headers.py"]
    assert touches[repo["side"]] == ["src/app/headers.py"]


def test_eval_history_finds_a_changelog_by_its_usual_names_or_the_one_named(tmp_path: Path) -> None:
    from neural_memory.local.evaluation.history import run
    from neural_memory.local.evaluation.history_truth import find_changelog
    from neural_memory.local.history.git import GitHistory, GitHistoryError

    root = tmp_path / "named"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit_file(root, "docs/history.txt", "- Fix the parser for nested tags (#7)\n", "History in docs")
    commit_file(root, "src/notes.md", "- not a changelog (#8)\n", "A file under another folder")
    history = GitHistory(root, repo="acme/named")
    # Given no file of the usual list, When eval-history looks, Then a file named like a changelog
    # in a docs folder is found (any case, .txt too), and nothing under other folders
    assert find_changelog(history) == ("docs/history.txt", "- Fix the parser for nested tags (#7)\n")
    # And a top-level one comes first
    commit_file(root, "NEWS", "- Add nested tags (#9)\n", "News at the top")
    assert find_changelog(history) == ("NEWS", "- Add nested tags (#9)\n")
    # And --changelog names one outright; a path the tree lacks is an error, not an empty score
    assert find_changelog(history, "src/notes.md") == ("src/notes.md", "- not a changelog (#8)\n")
    with pytest.raises(GitHistoryError, match="'CHANGES.md' is not a file"):
        run(root, "acme/named", None, Settings(data_dir=tmp_path / "data"), "CHANGES.md")


BOT = ("pre-commit-ci[bot]", "66853113+pre-commit-ci[bot]@users.noreply.github.com")


def _pull_requests(path: Path, since: str | None = None) -> dict[int, dict[str, Any]]:
    from neural_memory.local.history.git import GitHistory

    events = GitHistory(path, repo=REPO, since=since).events()
    return {e["detail"]["pull_request"]["number"]: e["detail"] for _, e in events if e["detail-type"] == "pull_request"}


def test_a_pull_requests_author_is_who_wrote_its_branch(tmp_path: Path) -> None:
    root = tmp_path / "web"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit_file(root, "src/app/cookies.py", "v1", "Add cookie parsing", at="2022-01-10T10:00:00+00:00")
    # Given a maintenance branch with Bo's work, into which Ann's PR is merged by a titled merge
    git(root, "checkout", "-q", "-b", "stable")
    for n in (1, 2):
        commit_file(root, f"src/app/h{n}.py", "v1", f"Backport {n}", who=BO, at=f"2022-02-0{n}T10:00:00+00:00")
    git(root, "checkout", "-q", "-b", "retry")
    commit_file(
        root, "src/app/retry.py", "v1", "Retry idempotent requests", who=ANN_AT_WORK, at="2022-02-05T10:00:00+00:00"
    )
    git(root, "checkout", "-q", "stable")
    git(root, "merge", "-q", "--no-ff", "retry", "-m", "Retry requests (#19)", who=BO, at="2022-02-06T10:00:00+00:00")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "stable", "-m", "Merge branch 'stable'", at="2022-02-07T10:00:00+00:00")
    # And a branch of the organisation that brought only a merge (Bo's), merged by Ann
    head = git(root, "rev-parse", "HEAD")
    tree = git(root, "rev-parse", "HEAD^{tree}")
    sync = git(
        root, "commit-tree", tree, "-p", head, "-p", "HEAD~1", "-m", "Sync", who=BO, at="2022-03-01T10:00:00+00:00"
    )
    git(
        root,
        "merge",
        "-q",
        "--no-ff",
        sync,
        "-m",
        "Merge pull request #21 from acme/sync",
        at="2022-03-02T10:00:00+00:00",
    )
    # And Ann's PR that a bot fixed up twice, merged by Bo
    git(root, "checkout", "-q", "-b", "lint")
    commit_file(root, "src/app/lint.py", "v1", "Add lint config", who=ANN_AT_WORK, at="2022-04-01T10:00:00+00:00")
    for n in (2, 3):
        commit_file(
            root, "src/app/lint.py", f"v{n}", "[pre-commit.ci] auto fixes", who=BOT, at=f"2022-04-0{n}T10:00:00+00:00"
        )
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "lint", "-m", "Lint the app (#23)", who=BO, at="2022-04-05T10:00:00+00:00")

    pulls = _pull_requests(root)
    # Then the side line's PR is Ann's, with her commit only, not the maintenance branch's history
    assert pulls[19]["pull_request"]["user"]["login"] == "annlee"
    assert pulls[19]["import"]["commitMessages"] == ["Retry idempotent requests"]
    assert pulls[19]["import"]["mergedBy"] == "Bo Chen"
    # And the organisation's branch is its head's author's; the fixed-up PR is Ann's, not the bot's
    assert pulls[21]["pull_request"]["user"]["login"] == "Bo Chen"
    assert pulls[23]["pull_request"]["user"]["login"] == "annlee"
    # And read from a date on, a PR is credited from its own commits, and none before it is read
    since = _pull_requests(root, since="2022-03-15T00:00:00+00:00")
    assert list(since) == [23] and since[23]["import"]["commits"] == 3
