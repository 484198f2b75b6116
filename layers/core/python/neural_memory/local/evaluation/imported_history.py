"""The history of a clone imported for ``eval-history`` into its temporary store's ``WORKSPACE``,
as ``import git`` does it and with progress, noting as the events stream what the evaluation asks
about: each merged pull request's observation ids (its own and its merge commit's push), title and
dates, and each push's commit subject (``Imported``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    from neural_memory.local.history.git import GitHistory
    from neural_memory.service import Service

WORKSPACE = "history"


@dataclass
class Imported:
    """What the history yielded: PR number -> observation ids and facts, old pushes' subjects."""

    prs: dict[int, dict[str, Any]] = field(default_factory=dict)
    pushes: list[dict[str, Any]] = field(default_factory=list)
    events: int = 0


def imported(history: GitHistory, service: Service) -> Imported:
    """Import the history into ``WORKSPACE`` with progress, as it streams; what the evaluation
    asks about."""
    from tqdm import tqdm

    from neural_memory.local.history.sink import EmbeddedSink, run_import

    total = history.prepare()
    for note in history.notes:
        print(f"note: {note}", file=sys.stderr)
    for warning in history.warnings:  # the numbers below are without what it could not read
        print(f"warning: {warning}", file=sys.stderr)
    facts = Imported()
    slug = history.repo.replace("/", ".")

    def noted() -> Iterator[tuple[str, dict[str, Any]]]:
        for origin, event in history.events():
            facts.events += 1
            detail = event["detail"]
            if event["detail-type"] == "pull_request":
                pr = detail["pull_request"]
                facts.prs[int(pr["number"])] = {
                    "ids": {f"github-pr-{slug}-{pr['number']}-pull_request_merged"},
                    "title": pr["title"],
                    "at": pr["merged_at"],
                    "created": pr.get("created_at"),
                    "sha": pr["merge_commit_sha"],
                }
            else:
                head = detail["head_commit"]
                push_id = f"github-push-{slug}-{detail['after'][:12]}"
                subject = head["message"].split("\n", 1)[0]
                facts.pushes.append({"id": push_id, "subject": subject, "at": head["timestamp"]})
            yield origin, event

    sink = EmbeddedSink(service, WORKSPACE)
    with tqdm(total=total, unit="event", desc="importing", file=sys.stderr) as bar:
        report = run_import(noted(), sink, progress=bar.update)
    if report.failures:
        first = report.failures[0]
        raise ValueError(f"{len(report.failures)} events failed to import, first {first.origin}: {first.reason}")
    push_ids = {push["id"] for push in facts.pushes}
    for pr in facts.prs.values():  # the push of its merge commit answers for it too
        merge_push = f"github-push-{slug}-{pr['sha'][:12]}"
        if merge_push in push_ids:
            pr["ids"].add(merge_push)
    return facts
