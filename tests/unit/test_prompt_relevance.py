"""Whether a prompt's recall can help (``agents/relevance.py``) and what of a reply is handed over
(``agents/recall.py``): a write is no question, steering asks nothing, the bar stands on the
workspace's background, a change is one item, and an item says what the change did."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from neural_memory.local.agents.memory_lines import _said
from neural_memory.local.agents.recall import answering, one_per_change
from neural_memory.local.agents.relevance import (
    Background,
    asks_about_the_past,
    best_vector,
    is_remember,
    is_steering,
    learn_background,
    read_background,
)

if TYPE_CHECKING:
    from pathlib import Path


def test_a_prompt_to_remember_is_a_write_and_a_question_about_remembering_is_not() -> None:
    for prompt in (
        "Remember: we decided to pin click<8.2",
        "please remember that we squash-merge",
        "Note for later: staging resets on Sundays",
        "note: the cache is per process",
        "keep in mind for future sessions that X owns refunds",
        "FYI we moved the docs to mkdocs",
        "don't forget that releases are cut on Thursdays",
    ):
        assert is_remember(prompt), prompt
    for prompt in ("do you remember why we pinned click?", "why did we pin click", "add a note field to the model"):
        assert not is_remember(prompt), prompt


def test_steering_is_a_few_words_that_ask_nothing() -> None:
    assert all(is_steering(p) for p in ("looks good, ship it", "ok, go ahead", "continue", "thanks!", "yes please"))
    assert not any(
        is_steering(p)
        for p in ("why did we ship it", "ok now rename tmp in parser.py", "continue with the retry logic")
    )


def test_a_question_about_the_past_is_read_from_the_servers_frame_or_its_words() -> None:
    assert asks_about_the_past("fix the retry logic", "why")  # the server read a question's frame
    for prompt in ("What did we decide about retries?", "who owns the billing code", "did we ever try uvloop"):
        assert asks_about_the_past(prompt, None), prompt
    for prompt in ("add a docstring to this function", "what does git rebase -i do?", "hmm, that broke the build"):
        assert not asks_about_the_past(prompt, None), prompt


def test_the_bar_stands_on_the_background_never_under_the_floor() -> None:
    background = Background.of([0.2, 0.5, 0.3, 0.4, 0.6])
    assert (background.typical, background.highest, background.learnt) == (0.4, 0.6, True)
    assert round(background.bar(asking=True, floor=0.35), 2) == 0.45  # the typical score and a margin
    assert round(background.bar(asking=False, floor=0.35), 2) == 0.68  # clearly above the highest
    assert Background.of([0.1, 0.1]).bar(asking=True, floor=0.35) == 0.35
    assert not Background().learnt and Background.of([]).typical == Background().typical
    assert best_vector([{"scores": {"vector": 0.4}}, {"scores": {"vector": None, "lexical": 1.0}}, {}]) == 0.4


def test_the_background_is_learnt_once_kept_privately_and_read_back(tmp_path: Path) -> None:
    asked: list[dict[str, Any]] = []

    def search(body: dict[str, Any]) -> dict[str, Any]:
        asked.append(body)
        if len(asked) == 3:
            raise OSError("one prompt fails: one sample less")
        return {"results": [{"scores": {"vector": 0.1 * (len(asked) % 7)}}]}

    assert read_background(str(tmp_path), "http://m", "k1")[1]  # nothing learnt: due
    learnt = learn_background(str(tmp_path), "http://m", "k1", search)
    assert learnt == len(asked) - 1 == 19
    background, due = read_background(str(tmp_path), "http://m", "k1")
    assert background.learnt and not due and round(background.highest, 2) == 0.6
    # Another key (another workspace) has its own; the file names neither the key nor the URL
    assert read_background(str(tmp_path), "http://m", "k2")[1]
    (file,) = (tmp_path / "background").glob("*.json")
    assert "k1" not in file.name and oct(file.stat().st_mode & 0o777) == "0o600"
    assert json.loads(file.read_text())["prompts"] == 20


def _result(id_: str, title: str, score: float, kind: str = "pull_request_merged", **more: Any) -> dict[str, Any]:
    return {"id": id_, "title": title, "score": score, "observationType": kind, **more}


def test_a_pull_request_and_the_push_that_merged_it_are_one_change() -> None:
    results = [
        _result("pr-7", "PR #7 merged: Retry with backoff", 1.0, duplicates=["push-a"]),
        _result("push-a", "Push to main: Merge pull request #7 from bo/retry", 0.9, "push"),
        _result("push-b", "Push to main: Retry with backoff (#7)", 0.8, "push"),  # a squash push, not collapsed
        _result("push-c", "Push to main: Bump the version (#8)", 0.7, "push"),
    ]
    assert [r["id"] for r in one_per_change(results)] == ["pr-7", "push-c"]


def test_what_is_handed_over_stops_when_memories_stop_adding() -> None:
    results = [_result(f"m{n}", f"M{n}", score) for n, score in enumerate([0.9, 1.0, 0.6, 0.4, 0.55])]
    # (in the reply's order: a "what changed" question's is oldest first)
    assert [r["id"] for r in answering(results)] == ["m0", "m1", "m2", "m4"]
    assert [r["id"] for r in answering(results, most=2)] == ["m0", "m1"]
    assert answering([]) == []


def test_an_item_says_what_the_change_did_not_what_it_touched() -> None:
    pr = _result(
        "pr-1", "PR #1 merged: Use UTC", 1.0, snippet="Local times skipped entries. Changed code: now Files: a.py"
    )
    assert _said(pr) == "PR #1 merged: Use UTC: Local times skipped entries"
    bare = _result(
        "pr-2", "PR #2 merged: Retry", 1.0, snippet="Commits: - Retry Linear retries hammered it. Files: w.py"
    )
    assert _said(bare) == "PR #2 merged: Retry: Retry Linear retries hammered it"
    squash = _result("pr-3", "PR #3 merged: Lint", 1.0, snippet="* Linting * Linting * Update docs")
    assert _said(squash) == "PR #3 merged: Lint: Linting Linting"
    turn = _result("t", "", 1.0, "conversation_turn", snippet="We pin the SDK at 4.2.")
    assert _said(turn) == "We pin the SDK at 4.2"


def test_a_push_says_its_commits_subjects() -> None:
    merge = _result(
        "p", "Push to main: Merge pull request #12 from acme/bo/retries", 1.0, "push",
        snippet="2 commit(s) pushed to main in acme/console: - Retry webhook deliveries (4cf0c6f) - Merge (abc1234)",
    )  # fmt: skip
    assert _said(merge) == "Push to main: Merge pull request #12 from acme/bo/retries: Retry webhook deliveries"
    one = _result(
        "q", "Push to main: Update README", 1.0, "push", snippet="1 commit(s) pushed: - Update README (68b80dc)"
    )
    assert _said(one) == "Push to main: Update README"
