"""Normalizers turn the sample EventBridge events into the expected observations."""

from __future__ import annotations

import copy

import pytest
from neural_memory.ingest.normalizers import UnsupportedEvent, normalize_eventbridge

from tests.conftest import load_event


def test_github_push_sample() -> None:
    # Given the sample push event
    # When normalised
    (obs,) = normalize_eventbridge(load_event("eventbridge/github_push")).observations
    # Then its fields come from where GitHub keeps them
    assert obs.observation_type == "push" and obs.source == "github"
    assert obs.title == "Push to main: Fix auth redirect loop after session refresh"
    assert obs.actor_name == "octocat"
    assert obs.occurred_at.isoformat() == "2025-12-12T09:58:30+00:00"
    assert obs.url == "https://github.com/acme/console/compare/9c2f1a7d3e5b...7f3a9b2c1d0e"
    assert "Read API base URL from NEXT_PUBLIC_API_URL (3e4d5c6)" in obs.content
    assert obs.metadata["repo"] == "acme/console" and obs.metadata["commits"] == 2


def test_github_merged_pull_request_sample() -> None:
    (obs,) = normalize_eventbridge(load_event("eventbridge/github_pull_request")).observations
    assert obs.observation_type == "pull_request_merged"
    assert obs.title == "PR #482 merged: Move session refresh into edge middleware"
    assert obs.actor_name == "hubot"
    assert obs.occurred_at.isoformat() == "2025-12-11T16:20:04+00:00"
    assert obs.url == "https://github.com/acme/console/pull/482"


def test_vercel_deployment_error_sample() -> None:
    (obs,) = normalize_eventbridge(load_event("eventbridge/vercel_deployment_error")).observations
    assert obs.observation_type == "deployment_error" and obs.source == "vercel"
    assert obs.title == "Deployment failed: console (production)"
    assert obs.actor_name == "octocat"
    assert obs.occurred_at.isoformat() == "2025-12-12T10:01:02+00:00"
    assert obs.url == "https://vercel.com/acme/console/8Hn2Jk4Lm6Np8Qr0St2Uv4Wx"
    assert obs.id == "vercel-uHp5NnBmQ3ZqX2p6TWd4"


def test_branch_deletion_is_skipped_with_a_reason() -> None:
    # Given a push that deletes a branch
    event = load_event("eventbridge/github_push")
    event["detail"].update(deleted=True, after="0" * 40, commits=[], head_commit=None)
    # When normalised, Then nothing is observed and the reason says why
    result = normalize_eventbridge(event)
    assert result.observations == []
    assert result.skipped is not None and "branch deletion" in result.skipped.reason


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda e: e.update({"detail-type": "star"}), "not supported"),
        (lambda e: e.update({"source": "gitlab"}), "no normalizer"),
        (lambda e: e.update({"detail": "oops"}), "not an EventBridge event"),
        (lambda e: e["detail"].pop("repository"), "repository"),
    ],
)
def test_events_we_cannot_understand_raise_with_a_reason(mutate: object, message: str) -> None:
    event = copy.deepcopy(load_event("eventbridge/github_push"))
    mutate(event)  # type: ignore[operator]
    with pytest.raises(UnsupportedEvent, match=message):
        normalize_eventbridge(event)
