"""``neural-memory eval-questions QUESTIONS CLONE``: questions as people ask them, over a real
repository's history imported as ``import git`` does, in default search.

A question set (``bench/questions/<repo>.json``) is written by hand from the repository's git
history, at a commit it names:

- **changes**: "why / when / which PR / what changed" questions, and "what changed in <year> about
  X", each with the merged pull request(s) that made the change. A PR is found when its merged-PR
  observation or the push of its merge commit is among the first 10 results (or their collapsed
  duplicates); a question's recall@10 is the share of its PRs found. Reported per kind, with
  hit@1 (its first result is one of them).
- **experts**: "who knows ..." questions, each with the paths it is about; the truth is whoever
  wrote the most commits touching them (``git log --follow``: renames followed; merges and bots
  left out; ties all count), under the identities ``import git`` gives. hit@1 and hit@3 of
  ``/v1/experts`` asked the question as written, and asked the bare subject.

The history is imported once into ``--history-dir`` (a data folder kept between runs: it is reused while
it holds the same repository at the same head), so many runs of the questions cost only their
searches.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from datetime import datetime

    from neural_memory.local.history.git import GitHistory
    from neural_memory.service import Service
    from neural_memory.settings import Settings

WORKSPACE = "history"
TOP_K = 10
KINDS = ("why", "when", "which", "what", "year")
MARKER = "question-eval.json"  # in --store: which repository and head the folder holds

ChangeKind = Literal["why", "when", "which", "what", "year"]


class ChangeQuestion(BaseModel):
    """A question about a change, with the PR(s) that made it."""

    model_config = ConfigDict(extra="forbid")

    kind: ChangeKind
    question: str = Field(min_length=1)
    prs: list[int] = Field(min_length=1)
    year: int | None = None


class ExpertQuestion(BaseModel):
    """A "who knows" question, its subject without the question's frame, and the paths it is about."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1)
    subject: str = Field(min_length=1)
    paths: list[str] = Field(min_length=1)


class QuestionSet(BaseModel):
    """One repository's questions, written at ``commit``."""

    model_config = ConfigDict(extra="forbid")

    repo: str
    commit: str
    note: str = ""
    changes: list[ChangeQuestion]
    experts: list[ExpertQuestion]


def load_questions(path: Path) -> QuestionSet:
    return QuestionSet.model_validate_json(path.read_text(encoding="utf-8"))


def head_of(history: GitHistory) -> str:
    return _git(history.path, "rev-parse", history.branch).strip()


def _git(path: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "core.quotepath=off", "-C", str(path), *args],
        capture_output=True,
        check=True,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    return done.stdout


@contextmanager
def history_service(
    history: GitHistory, settings: Settings, store: Path, clock: Callable[[], datetime]
) -> Iterator[Service]:
    """A service over ``store`` holding the history: imported now unless the folder already holds
    this repository at this head (its marker says so). The embedding cache is the settings' own
    (``--data-dir``), so a second import embeds nothing again."""
    from neural_memory.providers.embeddings.cache import EmbeddingCache
    from neural_memory.runtime import build_service

    head = head_of(history)
    marker = store / MARKER
    held = json.loads(marker.read_text()) if marker.exists() else None
    wanted = {"repo": history.repo, "head": head}
    if held is not None and {k: held.get(k) for k in wanted} != wanted:
        raise ValueError(f"{store} holds {held.get('repo')} at {held.get('head')}: give another --history-dir")
    store.mkdir(parents=True, exist_ok=True)
    service = build_service(settings.model_copy(update={"data_dir": store}), clock=clock)
    try:
        if service.embedding_cache is not None:
            service.embedding_cache.close()  # the store folder's own: the shared one is used instead
            service.embedding_cache = EmbeddingCache(settings.embedding_cache_path)
        if held is None:
            events = _import(history, service)
            marker.write_text(json.dumps({**wanted, "events": events}))
        yield service
    finally:
        service.close()


def _import(history: GitHistory, service: Service) -> int:
    from tqdm import tqdm

    from neural_memory.local.history.sink import EmbeddedSink, run_import

    events = list(history.events())
    for warning in history.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    sink = EmbeddedSink(service, WORKSPACE)
    with tqdm(total=len(events), unit="event", desc="importing", file=sys.stderr) as bar:
        report = run_import(events, sink, progress=bar.update)
    if report.failures:
        first = report.failures[0]
        raise ValueError(f"{len(report.failures)} events failed to import, first {first.origin}: {first.reason}")
    return len(events)


def pr_ids(service: Service, repo: str, numbers: list[int]) -> dict[int, set[str]]:
    """The observations that answer for each PR: its merged-PR observation, and the push of its
    merge commit when the history holds one. A PR the store does not hold maps to nothing."""
    slug = repo.replace("/", ".")
    wanted = {n: f"github-pr-{slug}-{n}-pull_request_merged" for n in numbers}
    records = service.store.read(WORKSPACE, list(wanted.values()))
    found: dict[int, set[str]] = {}
    for number, pr_id in wanted.items():
        record = records.get(pr_id)
        if record is None:
            found[number] = set()
            continue
        ids = {pr_id}
        sha = record.metadata.get("commitSha")
        if isinstance(sha, str):
            ids.add(f"github-push-{slug}-{sha[:12]}")
        found[number] = ids
    return found


def ranked(service: Service, query: str) -> list[set[str]]:
    """The ids of the first ``TOP_K`` results of a default search (each with its duplicates)."""
    from neural_memory.models import SearchRequest

    results = service.search(WORKSPACE, SearchRequest.model_validate({"query": query, "topK": TOP_K}), "eval").results
    return [{r.id, *r.duplicates} for r in results]


def score_changes(service: Service, questions: QuestionSet) -> dict[str, Any]:
    """recall@10 and hit@1 per kind and overall; each question's row."""
    numbers = sorted({n for q in questions.changes for n in q.prs})
    ids = pr_ids(service, questions.repo, numbers)
    rows: list[dict[str, Any]] = []
    for question in questions.changes:
        results = ranked(service, question.question)
        held = [n for n in question.prs if ids[n]]
        found = [n for n in held if any(ids[n] & r for r in results)]
        first = bool(results) and any(ids[n] & results[0] for n in held)
        rows.append(
            {"kind": question.kind, "question": question.question, "prs": question.prs, "held": held,
             "found": found, "recall@10": len(found) / len(held) if held else 0.0, "hit@1": first}
        )  # fmt: skip
    scores: dict[str, Any] = {"questions": len(rows), "missing": sorted(n for n in numbers if not ids[n])}
    for kind in (*KINDS, "all"):
        chosen = [row for row in rows if kind in ("all", row["kind"])]
        if chosen:
            scores[kind] = {
                "n": len(chosen),
                "recall@10": round(sum(r["recall@10"] for r in chosen) / len(chosen), 4),
                "hit@1": round(sum(r["hit@1"] for r in chosen) / len(chosen), 4),
            }
    scores["rows"] = rows
    return scores


def expert_truth(history: GitHistory, paths: list[str]) -> tuple[str, ...]:
    """Who wrote the most commits touching ``paths`` (each followed through its renames), merges
    and bots left out, as ``import git`` names people; everyone tied at the most."""
    from neural_memory.local.history.identities import Identities

    graph = history.graph()
    who = Identities(graph.values(), owner=history.owner)
    shas: set[str] = set()
    for path in paths:
        shas |= set(_git(history.path, "log", "--follow", "--format=%H", history.branch, "--", path).split())
    authors = [
        who.of(commit)
        for sha in shas
        if (commit := graph.get(sha)) is not None and len(commit.parents) < 2 and not who.of(commit).endswith("[bot]")
    ]
    counts = Counter(authors)
    top = max(counts.values(), default=0)
    return tuple(sorted(name for name, count in counts.items() if count == top))


def score_experts(service: Service, history: GitHistory, questions: QuestionSet) -> dict[str, Any]:
    """hit@1 and hit@3 of ``/v1/experts`` asked the question, and asked the bare subject."""
    from neural_memory.models import ExpertsRequest

    rows = []
    for question in questions.experts:
        truth = expert_truth(history, question.paths)
        row: dict[str, Any] = {"question": question.question, "subject": question.subject, "truth": list(truth)}
        for key, query in (("asked", question.question), ("subject", question.subject)):
            reply = service.experts(WORKSPACE, ExpertsRequest.model_validate({"query": query}), "eval")
            row[key] = [e.actor_name for e in reply.experts[:3]]
        rows.append(row)

    def hits(key: str, k: int) -> float:
        return round(sum(bool(set(row["truth"]) & set(row[key][:k])) for row in rows) / max(len(rows), 1), 4)

    return {
        "questions": len(rows),
        **{key: {"hit@1": hits(key, 1), "hit@3": hits(key, 3)} for key in ("asked", "subject")},
        "rows": rows,
    }


def run(questions_path: Path, clone: Path, store: Path, settings: Settings) -> dict[str, Any]:
    """Import (or reuse) the clone's history in ``store`` and score the question set on it."""
    from neural_memory.clock import utcnow
    from neural_memory.local.history.git import GitHistory

    questions = load_questions(questions_path)
    history = GitHistory(clone, repo=questions.repo)
    now = utcnow()
    with history_service(history, settings, store, clock=lambda: now) as service:
        return {
            "repo": questions.repo,
            "writtenAt": questions.commit,
            "head": head_of(history),
            "changes": score_changes(service, questions),
            "experts": score_experts(service, history, questions),
        }


def summary(result: dict[str, Any]) -> list[str]:
    """The report's lines."""
    changes, experts = result["changes"], result["experts"]
    lines = [f"{result['repo']} (questions written at {result['writtenAt'][:12]}, history at {result['head'][:12]})"]
    if changes["missing"]:
        lines.append(f"  PRs of the truth the history does not hold: {changes['missing']}")
    kinds = "  ".join(
        f"{kind} {changes[kind]['recall@10']:.4f} (n={changes[kind]['n']})" for kind in KINDS if kind in changes
    )
    lines.append(f"  changes recall@10: all {changes['all']['recall@10']:.4f} (n={changes['all']['n']}); {kinds}")
    # hit@1 of the kinds answered by one change; "what changed" lists its changes in time order
    firsts = "  ".join(f"{kind} {changes[kind]['hit@1']:.4f}" for kind in ("why", "when", "which") if kind in changes)
    lines.append(f"  changes hit@1 (the first result is the change): {firsts}")
    lines.append(
        f"  who knows ({experts['questions']}): asked hit@1 {experts['asked']['hit@1']:.2f} "
        f"hit@3 {experts['asked']['hit@3']:.2f}; bare subject hit@1 {experts['subject']['hit@1']:.2f} "
        f"hit@3 {experts['subject']['hit@3']:.2f}"
    )
    return lines


@contextmanager
def quiet() -> Iterator[None]:
    """A "search complete" line per search would bury the report: warnings only while it runs,
    unless the environment sets a level; the level before is restored after."""
    import logging
    import os

    from neural_memory.observability import logger

    previous = logger.log_level
    if not (os.getenv("POWERTOOLS_LOG_LEVEL") or os.getenv("LOG_LEVEL")):
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(previous)


def main(argv: list[str] | None = None) -> int:
    """``python -m neural_memory.local.evaluation.questions``: the same as the CLI command, runnable on any
    checkout's layer (how the numbers of a tree without the command are taken)."""
    import argparse

    from neural_memory.settings import Settings

    parser = argparse.ArgumentParser(prog="question_eval")
    parser.add_argument("questions", type=Path)
    parser.add_argument("clone", type=Path)
    parser.add_argument("--history-dir", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    settings = Settings(**({"data_dir": args.data_dir} if args.data_dir else {}))
    with quiet():
        result = run(args.questions, args.clone, args.history_dir, settings)
    if not args.json:
        print("\n".join(summary(result)))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
