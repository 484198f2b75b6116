"""What the prompt hook hands the model on a history brought in as ``import git`` brings it: the
answering change, once, for a question about the past; nothing for a prompt that asks nothing of
the memory; nothing for a prompt that tells the agent to remember something, whose fact is stored
instead. ``neural-memory-hook`` runs as Claude Code runs it (a process per event, JSON on stdin)
against the real local API."""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING

import pytest
from neural_memory.local.history.git import GitHistory
from neural_memory.local.history.sink import EmbeddedSink, run_import
from neural_memory.stores.base import read_one

from tests.helpers.git_repos import BO, commit_file, git, init
from tests.helpers.local_api import RunningApi, running_local_api
from tests.integration.test_agent_hooks import Hooked, context_of

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

pytestmark = pytest.mark.integration

REPO = "acme/ledger"
SLUG = "acme.ledger"
# Prompts that ask nothing of a project's history (steering, chores on the code at hand, general
# programming): the hook stays quiet for each
GENERIC = [
    "looks good, ship it",
    "add a docstring to this function",
    "rename the variable tmp to something clearer",
    "what does git rebase -i do?",
    "write a unit test for the parse_amount function",
    "explain the difference between a list and a tuple in Python",
    "make this loop a list comprehension",
]


def ledger_history(root: Path) -> Path:
    """A small project's history: squash-merged pull requests, and one merged with a merge commit."""
    repo = init(root / "ledger")
    git(repo, "remote", "add", "origin", f"https://github.com/{REPO}.git")
    commit_file(repo, "ledger/__init__.py", "", "Initial commit", at="2021-03-01T10:00:00+00:00")
    squashed = [
        ("ledger/export.py", "Add CSV export for invoices (#3)\n\nCustomers asked for spreadsheets of their "
         "invoices; the export writes one row per line item with the stdlib csv module."),
        ("ledger/money.py", "Store amounts as integer cents (#5)\n\nFloats lost pennies when the monthly "
         "reconciliation summed thousands of line items."),
        ("requirements.txt", "Pin pydantic below 2 until the models are migrated (#9)\n\nPydantic 2 renamed "
         "the validators our invoice models use; the pin holds until they are rewritten."),
        ("ledger/audit.py", "Write audit log timestamps in UTC (#14)\n\nLocal times made the nightly "
         "reconciliation skip entries written in the hour the clocks changed."),
    ]  # fmt: skip
    for n, (path, message) in enumerate(squashed):
        commit_file(repo, path, f"# {n}\n", message, at=f"2021-0{4 + n}-02T10:00:00+00:00")
    git(repo, "checkout", "-q", "-b", "retry-backoff")
    commit_file(
        repo,
        "ledger/webhooks.py",
        "BACKOFF = 2\n",
        "Retry webhook deliveries with exponential backoff\n\nLinear retries hammered the payment provider "
        "during its outage; exponential backoff with jitter spreads them out.",
        who=BO,
        at="2021-09-01T10:00:00+00:00",
    )
    git(repo, "checkout", "-q", "main")
    git(
        repo,
        "merge",
        "--no-ff",
        "-q",
        "-m",
        "Merge pull request #7 from bo/retry-backoff\n\nRetry webhook deliveries with exponential backoff",
        "retry-backoff",
        at="2021-09-02T10:00:00+00:00",
    )
    return repo


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxLocalEmbedder) -> Iterator[RunningApi]:
    root = tmp_path_factory.mktemp("ledger")
    history = GitHistory(ledger_history(root), repo=REPO)
    with running_local_api(root / "data", embedder, None) as running:
        report = run_import(list(history.events()), EmbeddedSink(running.service, "demo"))
        assert not report.failures
        yield running


def patient(api: RunningApi) -> tuple[str, ...]:
    return ("--url", api.url, "--timeout", "20")  # what is recalled is under test, not the deadline


def started(api: RunningApi, tmp_path: Path) -> Hooked:
    """A session started as Claude Code starts one: the hook learns the workspace's background."""
    hooked = Hooked(tmp_path)
    code, _, _ = hooked.run(
        hooked.event("SessionStart", session="s-start", source="startup"), *patient(api), key=api.key
    )
    assert code == 0
    # (its prompts use the defaults until it has: what they are handed is under test either way)
    with contextlib.suppress(AssertionError):
        hooked.wait_for("background learnt", timeout=30)
    return hooked


def test_a_question_about_a_change_gets_its_pull_request_once_not_its_merge_push_beside_it(
    ledger: RunningApi, tmp_path: Path
) -> None:
    hooked = started(ledger, tmp_path)
    prompt = "Why did we switch the webhook retries to exponential backoff?"
    code, out, _ = hooked.run(hooked.event("UserPromptSubmit", session="s-why", prompt=prompt), *patient(ledger),
                              key=ledger.key)  # fmt: skip
    assert code == 0
    context = context_of(out, "UserPromptSubmit")
    # The answering PR, first, saying why
    items = [line for line in context.splitlines() if line.startswith("- [")]
    assert items[0].startswith(f"- [github-pr-{SLUG}-7-pull_request_merged]")
    assert "hammered the payment provider" in context
    # And its merge push is that PR: not a second item, not a line of how it came to be
    assert f"github-push-{SLUG}-" not in context, context
    # And a change's lists (its files) are not what the model is handed
    assert "Files:" not in context


def test_a_prompt_that_asks_nothing_of_the_memory_gets_nothing(ledger: RunningApi, tmp_path: Path) -> None:
    hooked = started(ledger, tmp_path)
    for n, prompt in enumerate(GENERIC):
        code, out, _ = hooked.run(hooked.event("UserPromptSubmit", session=f"s-{n}", prompt=prompt),
                                  *patient(ledger), key=ledger.key)  # fmt: skip
        assert (code, out) == (0, ""), f"{prompt!r} got:\n{out}"
    assert hooked.log.count("UserPromptSubmit") == len(GENERIC)
    assert "recall injected" not in hooked.log


def test_a_prompt_to_remember_injects_nothing_and_the_fact_is_stored_as_the_persons_decision(
    ledger: RunningApi, tmp_path: Path
) -> None:
    hooked = Hooked(tmp_path)
    prompt = "Remember: we decided to round refunds half-even because the bank rounds them that way."
    code, out, _ = hooked.run(hooked.event("UserPromptSubmit", session="s-note", prompt=prompt), *patient(ledger),
                              key=ledger.key)  # fmt: skip
    assert (code, out) == (0, "")
    stored = re.search(r"stored as decision \[([^\]]+)\]", hooked.log)
    assert stored, hooked.log
    record = read_one(ledger.service.store, "demo", stored.group(1))
    assert record is not None
    assert record.content == "We decided to round refunds half-even because the bank rounds them that way."
    assert (record.observation_type, record.metadata["repo"], record.metadata["actorKind"]) == (
        "decision",
        "acme/console",
        "human",
    )
    # And a later question finds it
    asked = hooked.event("UserPromptSubmit", session="s-later", prompt="How do we round refunds, and why?")
    _, out, _ = hooked.run(asked, *patient(ledger), key=ledger.key)
    assert f"[{stored.group(1)}]" in context_of(out, "UserPromptSubmit")
