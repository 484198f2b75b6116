"""``eval-questions``: a question set scored on a clone's history imported once into a folder
that later runs reuse; who-knows truth from commit authorship following renames."""

from __future__ import annotations

import json
import os
import subprocess
from typing import TYPE_CHECKING

import pytest
from neural_memory.local.cli import main as cli_main
from neural_memory.local.evaluation import questions as question_eval
from neural_memory.local.history.git import GitHistory
from neural_memory.observability import logger
from neural_memory.providers import embeddings

from tests.helpers.fakes import HashEmbedder

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

ANN = ("Ann Lee", "12345+annlee@users.noreply.github.com")
BO = ("Bo Chen", "54321+bochen@users.noreply.github.com")


@pytest.fixture(autouse=True)
def _hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "build_embedder", lambda settings: HashEmbedder())


def _commit(repo: Path, path: str, text: str, message: str, who: tuple[str, str], at: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": who[0], "GIT_AUTHOR_EMAIL": who[1], "GIT_COMMITTER_NAME": who[0],
           "GIT_COMMITTER_EMAIL": who[1], "GIT_AUTHOR_DATE": at, "GIT_COMMITTER_DATE": at}  # fmt: skip
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    for args in (["add", "-A"], ["commit", "-q", "-m", message]):
        subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """Bo wrote the form parser three times under its old name; Ann renamed it and edited it once;
    two squashed pull requests changed the cookie code in 2023, one the parser in 2022."""
    root = tmp_path / "web"
    root.mkdir()
    subprocess.run(["git", "-C", str(root), "init", "-q", "-b", "main"], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", "https://github.com/acme/web.git"], check=True)
    for n in range(3):
        _commit(root, "src/forms.py", f"def parse():\n    return {n}\n", f"Tune the form parser {n}", BO,
                f"2021-0{n + 1}-10T10:00:00+00:00")  # fmt: skip
    subprocess.run(["git", "-C", str(root), "mv", "src/forms.py", "src/formparser.py"], check=True)
    _commit(root, "src/formparser.py", "def parse():\n    return 9\n", "Rename forms to formparser", ANN,
            "2022-01-10T10:00:00+00:00")  # fmt: skip
    _commit(root, "src/formparser.py", "def parse(stream):\n    return stream\n", "Stream multipart form data (#9)",
            ANN, "2022-03-01T10:00:00+00:00")  # fmt: skip
    _commit(root, "src/cookies.py", "def quote():\n    pass\n", "Quote cookie values with spaces (#12)", BO,
            "2023-02-01T10:00:00+00:00")  # fmt: skip
    _commit(root, "src/cookies.py", "def quote():\n    return 1\n", "Set Path=/ on cookies by default (#14)", ANN,
            "2023-06-01T10:00:00+00:00")  # fmt: skip
    return root


def test_questions_are_scored_on_a_history_imported_once(
    clone: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = {
        "repo": "acme/web", "commit": "x" * 40,
        "changes": [
            {"kind": "why", "question": "Why did we start streaming multipart form data?", "prs": [9]},
            {"kind": "year", "year": 2023, "question": "What changed in 2023 about cookies?", "prs": [12, 14]},
        ],
        "experts": [
            {"question": "Who knows the form parser?", "subject": "form parser", "paths": ["src/formparser.py"]}
        ],
    }  # fmt: skip
    path = tmp_path / "web.json"
    path.write_text(json.dumps(questions))
    history = tmp_path / "history"
    argv = ["eval-questions", str(path), str(clone), "--history-dir", str(history), "--data-dir", str(tmp_path / "d")]
    # When the questions are scored
    level = logger.log_level
    assert cli_main(argv) == 0
    assert logger.log_level == level  # quiet while it ran, as it was after
    first = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # Then each change question's PRs are found, per kind, and the experts' truth follows the rename:
    # Bo wrote three of the file's five commits, under its old name
    assert first["changes"]["all"]["recall@10"] == 1.0 and first["changes"]["year"]["n"] == 1
    assert first["experts"]["rows"][0]["truth"] == ["bochen"]
    assert question_eval.expert_truth(GitHistory(clone, repo="acme/web"), ["src/cookies.py"]) == (
        "annlee", "bochen")  # fmt: skip
    # And a second run reuses the imported history (its marker names the repository and head)
    marker = json.loads((history / question_eval.MARKER).read_text())
    assert marker["repo"] == "acme/web" and marker["events"] > 0
    assert cli_main(argv) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["changes"] == first["changes"]
    # A folder holding another history is refused, naming what it holds
    other = json.loads(path.read_text()) | {"repo": "acme/other"}
    path.write_text(json.dumps(other))
    assert cli_main(argv) == 2
    assert "holds acme/web" in capsys.readouterr().err
