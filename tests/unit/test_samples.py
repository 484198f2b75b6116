"""The sample events `make serve` loads read as one plausible story (issue 34): each deployment
comes after the push of its commit, a pull request is merged as a commit already made and after
its branch's last push, and no title names a date the data does not have (the demo moves every
sample's time to the last days, so a date in a title is soon false)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from neural_memory.local.ingest.files import expand, load_file

from tests.helpers.events import EVENTS

if TYPE_CHECKING:
    from datetime import datetime

    from neural_memory.models import ObservationIn

_DATES = re.compile(
    r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}\b|\b\d{4}-\d{2}-\d{2}\b"
    r"|\b(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)'s\b|\b(yesterday|today|last week)\b",
    re.IGNORECASE,
)


def _samples() -> list[ObservationIn]:
    return [o for path in expand([EVENTS]) for loaded in load_file(path) for o in loaded.observations]


def test_every_sample_deployment_comes_after_the_push_of_its_commit() -> None:
    samples = _samples()
    pushed: dict[str, datetime] = {}
    for push in (o for o in samples if o.observation_type == "push"):
        sha = str((push.metadata or {})["commitSha"])
        pushed[sha] = min(push.occurred_at, pushed.get(sha, push.occurred_at))
    deployments = [o for o in samples if o.observation_type.startswith("deployment_")]
    assert deployments and pushed
    checked = 0
    for deployment in deployments:
        sha = str((deployment.metadata or {}).get("commitSha"))
        if sha in pushed:
            checked += 1
            assert deployment.occurred_at >= pushed[sha], (deployment.id, deployment.occurred_at, pushed[sha])
    assert checked >= 3  # created, error, canceled: the failed deploy's story


def test_no_sample_names_a_date_in_its_title_or_a_weekday_in_its_text() -> None:
    for sample in _samples():
        assert not _DATES.search(sample.title or ""), (sample.id, sample.title)
        assert not re.search(r"\b\w+day's\b", sample.content), (sample.id, sample.content)


def test_every_merged_sample_pull_request_is_merged_as_a_commit_already_made_from_its_last_push() -> None:
    samples = _samples()
    # A push's time is its head commit's: when that commit was made
    pushed = {str((p.metadata or {})["commitSha"]): p for p in samples if p.observation_type == "push"}
    merged = [o for o in samples if o.observation_type == "pull_request_merged"]
    assert merged
    for pr in merged:
        metadata = pr.metadata or {}
        # Its merge commit, pushed to the base branch, exists by the merge (not hours after it)
        commit = pushed[str(metadata["commitSha"])]
        assert (commit.metadata or {})["branch"] == metadata["base"], (pr.id, commit.id)
        assert commit.occurred_at <= pr.occurred_at, (pr.id, pr.occurred_at, commit.occurred_at)
        # And its head branch was pushed to before it was merged, never after
        for push in (p for p in pushed.values() if (p.metadata or {})["branch"] == metadata["head"]):
            assert push.occurred_at < pr.occurred_at, (pr.id, pr.occurred_at, push.id, push.occurred_at)
