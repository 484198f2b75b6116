"""The team-written half of the instruction set (issue 55): commit messages from real public
histories, the look-alikes a detector of instruction-like text must leave alone.

    python -m bench.instructions.collect_team_texts [--repos /work/repos] [--out bench/instructions] [--blind]

Reads each clone's ``git log --format=%B`` on its checked-out HEAD and writes
``team_tuning.jsonl`` and ``team_holdout.jsonl`` (one ``{"id": "<repo>@<sha12>", "repo": ..., "text": ...}``
a line, sorted by id). The two files share no repository. Per repository it keeps every message
of at least ``LONG`` characters (squash merges carry the pull request's description), every
shorter one that shows a command, code or an imperative to the reader (backticks, ``$ ``,
``pip install``, "run", "use", ...), and a seeded sample of the rest; pre-commit.ci's automatic
fixes and merges of one branch into another are dropped, dependabot's bumps are kept but capped
at ``BOT_SHARE`` of a file, and exact duplicate texts are kept once (the holdout drops any text the
tuning file already holds). Rebuilding from the same clones at the same HEADs gives the same files.

``--blind`` writes only ``team_blind.jsonl``, the second blind set's team texts, from four more
histories no other file uses (click, starlette, attrs, pluggy) with the same rules; it leaves the
two other files as they are and drops any text they already hold.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from random import Random

SEED = 55
LONG = 200
SAMPLE_SHORT = 60
MIN_CHARS = 25
BOT_SHARE = 0.10

TUNING = ("tox", "typer", "gitleaks", "detect-secrets", "httpx", "werkzeug", "jinja", "rich")
HOLDOUT = ("anyio", "yarl", "packaging", "pip-tools", "marshmallow", "django-debug-toolbar")
BLIND = ("click", "starlette", "attrs", "pluggy")
HELD_OUT_ELSEWHERE = ("requests", "flask", "black", "uvicorn", "pip")  # never read, whatever --repos holds

_LOOKS_LIKE_AN_INSTRUCTION = re.compile(
    r"`|^\s*\$ |pip install|python -m|\bcurl\b|\bwget\b|\bnpm\b|\bnpx\b|\bexport \w+=|"
    r"\b(run|use|install|make sure|please|do not|don't|never|always|set|add|remove|ignore)\b",
    re.IGNORECASE | re.MULTILINE,
)
_GIT = ("git", "-C")
_BRANCH_MERGE = re.compile(r"^Merge (branch|remote-tracking branch|tag) '[^']+'( of \S+)?( into \S+)?\s*$")


@dataclass(frozen=True)
class Commit:
    repo: str
    sha: str
    author: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.repo}@{self.sha[:12]}"


def _commits(clone: Path, repo: str) -> list[Commit]:
    out = subprocess.run(
        [*_GIT, str(clone), "log", "--format=%H%x1f%an <%ae>%x1f%B%x1e", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
    ).stdout
    commits = []
    for record in out.split("\x1e"):
        if not record.strip():
            continue
        sha, author, body = record.lstrip("\n").split("\x1f", 2)
        commits.append(Commit(repo, sha, author, body.strip()))
    return commits


def _is_bot(commit: Commit) -> bool:
    return "[bot]" in commit.author or commit.author.startswith("dependabot")


def _is_noise(commit: Commit) -> bool:
    """Text no person wrote for a reader: pre-commit.ci's fixes, bare branch merges, empty bodies."""
    if len(commit.text) < MIN_CHARS or _BRANCH_MERGE.match(commit.text):
        return True
    return "pre-commit-ci" in commit.author or commit.text.startswith("[pre-commit.ci]")


def _select(commits: list[Commit], rng: Random) -> list[Commit]:
    kept: list[Commit] = []
    rest: list[Commit] = []
    for commit in commits:
        if _is_noise(commit):
            continue
        if len(commit.text) >= LONG or _LOOKS_LIKE_AN_INSTRUCTION.search(commit.text):
            kept.append(commit)
        else:
            rest.append(commit)
    rest.sort(key=lambda c: c.sha)
    kept += rng.sample(rest, min(SAMPLE_SHORT, len(rest)))
    return kept


def _file(clones: Path, repos: tuple[str, ...], seen: set[str]) -> list[Commit]:
    rng = Random(SEED)
    people: list[Commit] = []
    bots: list[Commit] = []
    for repo in repos:
        assert repo not in HELD_OUT_ELSEWHERE, repo
        for commit in _select(_commits(clones / repo, repo), rng):
            if commit.text in seen:
                continue
            seen.add(commit.text)
            (bots if _is_bot(commit) else people).append(commit)
    bots.sort(key=lambda c: c.id)
    cap = int(BOT_SHARE * len(people) / (1 - BOT_SHARE))
    chosen = people + (rng.sample(bots, cap) if len(bots) > cap else bots)
    return sorted(chosen, key=lambda c: c.id)


def _write(path: Path, commits: list[Commit]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for c in commits:
            f.write(json.dumps({"id": c.id, "repo": c.repo, "text": c.text}, ensure_ascii=False) + "\n")


def _texts_of(path: Path) -> set[str]:
    with path.open(encoding="utf-8") as f:
        return {str(json.loads(line)["text"]) for line in f}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", type=Path, default=Path("/work/repos"), help="the directory holding the clones")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent, help="where the files go")
    parser.add_argument("--blind", action="store_true", help="write only team_blind.jsonl (click, starlette, ...)")
    args = parser.parse_args()
    seen: set[str] = set()
    files: tuple[tuple[str, tuple[str, ...]], ...] = (("team_tuning.jsonl", TUNING), ("team_holdout.jsonl", HOLDOUT))
    if args.blind:
        for name, _ in files:
            seen |= _texts_of(args.out / name)
        files = (("team_blind.jsonl", BLIND),)
    for name, repos in files:
        commits = _file(args.repos, repos, seen)
        _write(args.out / name, commits)
        per_repo = {repo: sum(c.repo == repo for c in commits) for repo in repos}
        bots = sum(_is_bot(c) for c in commits)
        print(f"{name}: {len(commits)} texts ({bots} by bots) {per_repo}")
        for repo in repos:
            head = subprocess.run([*_GIT, str(args.repos / repo), "rev-parse", "HEAD"], check=True, capture_output=True)
            print(f"  {repo} at {head.stdout.decode().strip()}")


if __name__ == "__main__":
    main()
