"""A file keeps its history through its moves: ``git mv`` to another name, a move of the package
into ``src/``, a split whose larger part keeps most of the file. Who knows it (``/v1/experts`` on
an imported history, and ``eval-history``'s truth), what went stale, and the truth of staleness all
follow it, on a repository the test builds with git."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from neural_memory.local.cli import main
from neural_memory.local.evaluation.history_truth import topics
from neural_memory.local.history.git import GitHistory
from neural_memory.models import ExpertsRequest, ObservationIn
from neural_memory.providers import embeddings
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore

from tests.helpers.events import NOW
from tests.helpers.fakes import HashEmbedder
from tests.helpers.git_repos import BO, commit_file, git, init

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

REPO = "acme/web"
BIG = "".join(f"def handler_{n}(request):\n    return respond(request, {n})\n\n" for n in range(30))


@pytest.fixture(autouse=True)
def _hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "build_embedder", lambda settings: HashEmbedder())


def _moved(root: Path) -> dict[str, str]:
    """Bo writes the cookie jar, the headers and the handlers; Ann renames the jar, moves the
    package into src/, and splits the handlers, touching each once more."""
    init(root)
    shas = {}
    for n in range(8):
        shas[f"cookies-{n}"] = commit_file(
            root,
            "app/cookies.py",
            f"v{n}\n" * 20,
            f"Cookie parsing, step {n}",
            who=BO,
            at=f"2021-01-{n + 1:02d}T10:00:00+00:00",
        )
    for n in range(3):
        commit_file(
            root,
            "app/headers.py",
            f"h{n}\n" * 20,
            f"Header casing, step {n}",
            who=BO,
            at=f"2021-0{n + 5}-10T10:00:00+00:00",
        )
    for n in range(3):
        commit_file(
            root,
            "app/handlers.py",
            BIG + f"# {n}\n",
            f"Handlers, step {n}",
            who=BO,
            at=f"2021-0{n + 5}-20T10:00:00+00:00",
        )
    git(root, "mv", "app/cookies.py", "app/jar.py")
    git(root, "commit", "-q", "-m", "Call the cookie module jar", at="2022-01-01T10:00:00+00:00")
    shas["rename"] = git(root, "rev-parse", "HEAD")
    commit_file(root, "app/jar.py", "v8\n" + "v7\n" * 19, "Jar: keep the order", at="2022-02-01T10:00:00+00:00")
    (root / "src").mkdir()
    git(root, "mv", "app", "src/app", at="2022-03-01T10:00:00+00:00")
    git(root, "commit", "-q", "-m", "Move the package into src/", at="2022-03-01T10:00:00+00:00")
    commit_file(root, "src/app/headers.py", "h3\n" * 20, "Headers: keep case", at="2022-04-01T10:00:00+00:00")
    # The split, in one commit: most of the handlers go to routes.py, two to a new module
    head, tail = BIG.split("def handler_28")
    (root / "src/app/routes.py").write_text(head + "# 2\n")
    (root / "src/app/extra.py").write_text("def handler_28" + tail)
    git(root, "rm", "-q", "src/app/handlers.py")
    git(root, "add", "src/app/routes.py", "src/app/extra.py")
    git(root, "commit", "-q", "-m", "Split the handlers", at="2022-05-01T10:00:00+00:00")
    return shas


def test_eval_historys_truth_follows_a_file_through_a_rename_a_move_and_a_split(tmp_path: Path) -> None:
    # Given a history whose files were renamed, moved into src/ and split by Ann, written by Bo
    _moved(tmp_path / "web")
    history = GitHistory(tmp_path / "web", repo=REPO)
    # When eval-history's truth names each file's top author
    found = {topic.path: topic for topic in topics(history)}
    owners = {path: topic.owners for path, topic in found.items()}
    # Then it is Bo's, who wrote them under their earlier names, not the mover's
    assert owners["src/app/jar.py"] == ("Bo Chen",)
    assert owners["src/app/headers.py"] == ("Bo Chen",)
    assert owners["src/app/routes.py"] == ("Bo Chen",)
    # And the truth of this very path alone, kept to compare with, is the mover's
    assert found["src/app/jar.py"].path_owners == ("annlee",)


def test_who_knows_a_renamed_file_finds_who_wrote_it_under_its_old_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the history imported
    shas = _moved(tmp_path / "web")
    data = tmp_path / "data"
    assert (
        main(["import", "git", str(tmp_path / "web"), "--repo", REPO, "--workspace", "w", "--data-dir", str(data)]) == 0
    )
    capsys.readouterr()
    settings = Settings(data_dir=data)
    service = Service(SqliteStore(settings.sqlite_path), HashEmbedder(), settings, clock=lambda: NOW)
    try:
        # Then a push under the old name says what the file is called now
        old = service.store.read("w", [f"github-push-acme.web-{shas['cookies-0'][:12]}"])
        assert "Files: app/cookies.py (now src/app/jar.py)" in next(iter(old.values())).content
        # And who knows the jar, by its name today, is Bo, who wrote it as cookies.py
        reply = service.experts("w", ExpertsRequest.model_validate({"query": "jar"}), "test")
        assert [e.actor_name for e in reply.experts][:1] == ["Bo Chen"]
        # And a note about cookies.py from before the rename is stale from the rename on
        note = ObservationIn.model_validate(
            {
                "id": "claim-cookies",
                "source": "manual",
                "observationType": "note",
                "occurredAt": "2021-06-01T00:00:00+00:00",
                "title": "Cookies",
                "content": "app/cookies.py splits on semicolons",
                "actorName": "Bo Chen",
            }
        )
        service.index("w", [note])
        assert service.store.read("w", ["claim-cookies"])["claim-cookies"].possibly_stale == shas["rename"]
    finally:
        service.close()
