"""`neural-memory eval` on the engineering-events dev set (bench/engineering_events): the
checked-in set is what its seeded generator writes (labels checked against the normalizers'
output), and the command, run through the CLI's ``main`` on a slice (the last two weeks and a
few questions per tier) with the real local model, prints every measure next to the design's
target; the same slice with each question given another question's answers scores lower."""

from __future__ import annotations

import contextlib
import io
import json
from typing import TYPE_CHECKING, Any

import pytest
from neural_memory.ingest.prepare import observation_id
from neural_memory.local.cli import main
from neural_memory.local.evaluation.engineering_events import (
    TARGETS,
    hit_at,
    percentile,
    r_precision,
    recall_at,
    returned,
)
from neural_memory.local.ingest.files import load_document
from neural_memory.models import SearchResult

from bench.engineering_events import generate

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

SLICE_FROM = "2026-10-26"  # the last two weeks: expired C (week 4) and live C (week 5)
PER_TIER = 6


def _slice(folder: Path, shuffled: bool) -> Path:
    """Events from ``SLICE_FROM`` on and ``PER_TIER`` questions per tier whose answers are all in
    them; ``shuffled`` gives each question the answers of the next one of its tier (same tier, so
    the tier searches still see them, but the wrong ones)."""
    lines = (generate.FOLDER / "events.jsonl").read_text(encoding="utf-8").splitlines()
    events = [line for line in lines if json.loads(line)["time"] >= SLICE_FROM]
    labels = json.loads((generate.FOLDER / "queries.json").read_text(encoding="utf-8"))
    held = {observation_id(o) for line in events for o in load_document(json.loads(line), "slice").observations}
    kept: list[dict[str, Any]] = []
    for tier in "ACE":
        mine = [q for q in labels["queries"] if q["tier"] == tier and set(q["relevant"]) <= held]
        chosen = mine[-PER_TIER:]
        if shuffled:
            answers = [q["relevant"] for q in chosen]
            chosen = [{**q, "relevant": answers[(n + 1) % len(chosen)]} for n, q in enumerate(chosen)]
        kept.extend(chosen)
    folder.mkdir()
    (folder / "events.jsonl").write_text("".join(line + "\n" for line in events), encoding="utf-8")
    (folder / "queries.json").write_text(json.dumps({**labels, "queries": kept}), encoding="utf-8")
    return folder


def _eval(folder: Path, data_dir: Path) -> tuple[int, list[str]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["eval", str(folder), "--data-dir", str(data_dir)])
    return code, out.getvalue().strip().splitlines()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data folder for the module: its embedding cache spares the second run the model."""
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> tuple[int, list[str]]:
    return _eval(_slice(tmp_path_factory.mktemp("right") / "slice", shuffled=False), data_dir)


def test_the_checked_in_set_is_what_its_seeded_generator_writes() -> None:
    # Given the generator (which checks every label against the normalizers' output before it
    # writes), When it runs again, Then it writes the checked-in bytes.
    assert generate.main(["--check"]) == 0
    labels = json.loads((generate.FOLDER / "queries.json").read_text(encoding="utf-8"))
    tiers = [q["tier"] for q in labels["queries"]]
    assert len(tiers) >= 60 and min(tiers.count(t) for t in "ACE") >= 20


def test_eval_prints_each_measure_next_to_its_target(labelled: tuple[int, list[str]]) -> None:
    code, out = labelled
    result = json.loads(out[-1])
    assert code == 0
    assert out[0].startswith(f"engineering-events (hybrid, rerank fast, clock {result['now']}): 18 questions")
    rows = {line.split("  ")[1].strip(): line for line in out[2:-1]}
    assert len(rows) == 9, out
    for label in ("top-3 accuracy", "A recall@10", "C recall@10", "E precision", "latency A only", "latency all"):
        row = next(line for name, line in rows.items() if name.startswith(label))
        assert row.rstrip().endswith(("pass", "FAIL")), row
    assert next(line for name, line in rows.items() if name.startswith("E recall@10")).rstrip().endswith("-")
    scores = result["scores"]
    assert all(0.0 <= value <= 1.0 for value in scores.values())
    assert set(result["latencyMs"]) == {"A", "C", "E", "all"}
    assert all(0 < ms["p50"] <= ms["p95"] for ms in result["latencyMs"].values())
    for key, target in TARGETS.items():
        assert result["passed"][key] == (scores[key] > target)
    # The clock hid week 4's collaborative observations, and none came back.
    assert result["pastWindow"] >= 5 and result["pastWindowByVector"] == 0
    assert result["questionsByTier"] == {"A": 6, "C": 6, "E": 6}


def test_answers_of_other_questions_score_lower(
    tmp_path: Path, data_dir: Path, labelled: tuple[int, list[str]]
) -> None:
    # Given the same slice with each question labelled with the answers of another of its tier
    code, out = _eval(_slice(tmp_path / "slice", shuffled=True), data_dir)
    right, wrong = json.loads(labelled[1][-1])["scores"], json.loads(out[-1])["scores"]
    # Then the retrieval that found the right answers no longer finds the labelled ones
    assert code == 0
    assert wrong["top3"] < right["top3"]
    assert wrong["recall.A"] < right["recall.A"] and wrong["recall.C"] < right["recall.C"]
    assert wrong["precision.E"] < right["precision.E"]


def _result(observation_id: str, *duplicates: str) -> SearchResult:
    return SearchResult.model_validate(
        {
            "id": observation_id,
            "title": observation_id,
            "url": None,
            "snippet": "",
            "score": 0.5,
            "source": "github",
            "observationType": "push",
            "actorName": None,
            "occurredAt": "2026-11-02T10:00:00Z",
            "tier": "E",
            "metadata": {},
            "scores": {"final": 0.5},
            "duplicates": list(duplicates),
        }
    )


def test_measures_on_a_known_ranking() -> None:
    ranked = returned([_result("a"), _result("b", "c"), _result("d"), _result("e")])
    relevant = frozenset({"c", "e"})
    assert ranked[1] == {"b", "c"}  # a duplicate collapsed into a result was returned with it
    assert hit_at(ranked, relevant, 1) == 0.0 and hit_at(ranked, relevant, 2) == 1.0
    assert recall_at(ranked, relevant, 3) == 0.5 and recall_at(ranked, relevant, 10) == 1.0
    assert r_precision(ranked, relevant) == 0.5  # of the first R = 2 results, one is relevant
    assert r_precision([], relevant) == 0.0
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 0.5) == 3.0
    assert percentile([float(n) for n in range(1, 101)], 0.95) == 95.0
