"""Normalizers turn the sample EventBridge events into the expected observations."""

from __future__ import annotations

import copy

import pytest
from neural_memory.ingest.normalizers import UnsupportedEvent, normalize_eventbridge

from tests.helpers.events import load_event


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
    assert obs.occurred_at.isoformat() == "2025-12-12T09:58:30+00:00"
    assert obs.url == "https://github.com/acme/console/pull/482"


def test_vercel_deployment_error_sample() -> None:
    (obs,) = normalize_eventbridge(load_event("eventbridge/vercel_deployment_error")).observations
    assert obs.observation_type == "deployment_error" and obs.source == "vercel"
    assert obs.title == "Deployment failed: console (production)"
    assert obs.actor_name == "octocat"
    assert obs.occurred_at.isoformat() == "2025-12-12T10:01:02+00:00"
    assert obs.url == "https://vercel.com/acme/console/8Hn2Jk4Lm6Np8Qr0St2Uv4Wx"
    assert obs.id == "vercel-dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx-error"


def test_a_webhook_pull_request_has_no_imported_facts_and_an_imported_one_keeps_them() -> None:
    # Given the sample merged pull request, as the webhook delivers it
    event = load_event("eventbridge/github_pull_request")
    (webhook,) = normalize_eventbridge(event).observations
    # Then it has exactly the metadata it always had, and no code refs
    assert set(webhook.metadata) == {"repo", "number", "base", "head", "bot", "commitSha", "authorAssociation"}
    assert webhook.code_refs is None
    # When the same pull request comes from an import, with what the REST API adds
    event["detail"]["import"] = {
        "reviewers": ["hubot", 7],
        "mergedBy": "octocat",
        "commits": 3,
        "files": ["src/middleware.ts", "", "x" * 501, "src/middleware.ts", "README.md"],
    }
    (imported,) = normalize_eventbridge(event).observations
    # Then it is the same observation (same id), with the reviewers, merger, commit count and files
    assert imported.id == webhook.id and imported.title == webhook.title
    files = "Files: src/middleware.ts, README.md"
    assert imported.metadata == {
        **webhook.metadata,
        "reviewers": ["hubot"],
        "mergedBy": "octocat",
        "commits": 3,
        "importedText": files,
    }
    # And what it did (the changed paths, and what the commits' messages say, when given) is searched with its body
    assert imported.content == f"{webhook.content}\n\n{files}"
    messages = ["Refresh at the edge\n\nThe cache\n  kept stale pages.\n\nCo-authored-by: A <a@example.com>", 5, "Lint"]
    event["detail"]["import"]["commitMessages"] = [*messages, "Bump\n\n" + "word " * 200]
    (with_commits,) = normalize_eventbridge(event).observations
    listed = "- Refresh at the edge\n  The cache kept stale pages.\n- Lint\n- Bump\n  " + ("word " * 100).strip()
    assert with_commits.content.endswith(f"Commits:\n{listed}\nFiles: src/middleware.ts, README.md")
    # And the code it changed, by name (names that cannot be one are left out)
    event["detail"]["import"]["definitions"] = ["edge_cache", 7, "", "x" * 201, " purge ", "a\nFiles: x.py"]
    (with_code,) = normalize_eventbridge(event).observations
    assert f"{listed}\nChanged code: edge_cache, purge\nFiles: " in with_code.content
    # And a PR of many long commit messages fits its metadata: the bodies go first, then the names
    event["detail"]["import"]["commitMessages"] = [f"Step {n}\n\n" + "why " * 150 for n in range(50)]
    event["detail"]["import"]["definitions"] = [f"function_{n}" for n in range(30)]
    event["detail"]["import"]["files"] = [f"src/module_{n}/handlers.py" for n in range(100)]
    (long,) = normalize_eventbridge(event).observations
    assert "- Step 0\n- Step 1\n" in long.content and "why" not in long.content
    assert "Changed code: function_0, " in long.content and "src/module_99/handlers.py" in long.content
    event["detail"]["import"]["files"] = [f"src/{'deep/' * 40}module_{n}.py" for n in range(100)]
    (longer,) = normalize_eventbridge(event).observations
    assert "Changed code" not in longer.content and "- Step 49" in longer.content
    assert imported.code_refs is not None
    assert [(ref.repository, ref.paths) for ref in imported.code_refs] == [
        ("acme/console", ["src/middleware.ts", "README.md"])
    ]


def test_a_vercel_observation_is_named_by_its_deployment_and_state_not_the_delivery() -> None:
    # Given a deployment.error delivery, and a redelivery of it with another event id
    event = load_event("eventbridge/vercel_deployment_error")
    again = copy.deepcopy(event)
    again["detail"]["id"] = "another-delivery"
    # When normalised, Then both land on the deployment's error observation
    ids = {o.id for e in (event, again) for o in normalize_eventbridge(e).observations}
    assert ids == {"vercel-dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx-error"}
    # And a body without a deployment id keeps the event's id
    del again["detail"]["payload"]["deployment"]["id"]
    (obs,) = normalize_eventbridge(again).observations
    assert obs.id == "vercel-another-delivery"


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


EXPECTED: dict[str, tuple[str, str, str | None, str] | str] = {
    # sample: (observation type, title, actor, occurredAt) — or the reason it is skipped / rejected
    "github_push": ("push", "Push to main: Fix auth redirect loop after session refresh", "octocat",
                    "2025-12-12T09:58:30+00:00"),
    "github_push_force": ("push", "Push to session-refresh-edge: Rebase session refresh onto main", "octocat",
                          "2025-12-12T09:41:02+00:00"),
    "github_push_branch_deleted": "skipped: branch deletion",
    "github_pull_request": ("pull_request_merged", "PR #482 merged: Move session refresh into edge middleware",
                            "hubot", "2025-12-12T09:58:30+00:00"),
    "github_pull_request_closed_unmerged": ("pull_request_closed",
                                            "PR #476 closed: Try refreshing sessions in a service worker", "hubot",
                                            "2025-12-10T12:00:00+00:00"),
    "github_pull_request_opened_bot": ("pull_request_opened", "PR #490 opened: Bump next from 15.0.3 to 15.0.4",
                                       "dependabot[bot]", "2025-12-12T06:00:00+00:00"),
    "github_issue_opened": ("issue_opened", "Issue #488 opened: Login end-to-end test is flaky on CI", "hubot",
                            "2025-12-10T08:12:00+00:00"),
    "github_issue_closed": ("issue_closed", "Issue #488 closed: Login end-to-end test is flaky on CI", "octocat",
                            "2025-12-12T11:30:00+00:00"),
    "github_issue_comment": ("issue_comment", "Comment on #488: Login end-to-end test is flaky on CI", "octocat",
                             "2025-12-11T09:00:00+00:00"),
    "github_release": ("release", "Release v2.14.0: Console 2.14.0", "octocat", "2025-12-12T12:05:00+00:00"),
    "github_star_unsupported": "rejected: GitHub event 'star' is not supported",
    "vercel_deployment_created": ("deployment_created", "Deployment started: console (production)", "octocat",
                                  "2025-12-12T09:59:10+00:00"),
    "vercel_deployment_error": ("deployment_error", "Deployment failed: console (production)", "octocat",
                                "2025-12-12T10:01:02+00:00"),
    "vercel_deployment_succeeded": ("deployment_succeeded", "Deployment succeeded: console (production)", "octocat",
                                    "2025-12-12T11:00:00+00:00"),
    "vercel_deployment_canceled": ("deployment_canceled", "Deployment canceled: console (production)", "octocat",
                                   "2025-12-12T10:06:40+00:00"),
    "note": ("note", "Release checklist: env vars first", "octocat", "2025-12-12T15:00:00+00:00"),
    "conversation_turn": ("conversation_turn", "Agent answered: why the deploy failed", "support-bot",
                          "2025-12-13T10:15:00+00:00"),
}  # fmt: skip


def test_every_eventbridge_sample_has_an_expectation() -> None:
    from tests.helpers.events import EVENTS

    assert {p.stem for p in (EVENTS / "eventbridge").glob("*.json")} == set(EXPECTED)


@pytest.mark.parametrize("sample", sorted(EXPECTED))
def test_each_sample_is_normalised_as_expected(sample: str) -> None:
    # Given a real-shaped EventBridge sample
    event = load_event(f"eventbridge/{sample}")
    expected = EXPECTED[sample]
    # When normalised, Then it yields the expected observation, or is skipped / rejected with a reason
    if isinstance(expected, str):
        kind, _, reason = expected.partition(": ")
        if kind == "rejected":
            with pytest.raises(UnsupportedEvent, match=reason):
                normalize_eventbridge(event)
        else:
            result = normalize_eventbridge(event)
            assert result.observations == [] and result.skipped is not None and reason in result.skipped.reason
        return
    (obs,) = normalize_eventbridge(event).observations
    assert (obs.observation_type, obs.title, obs.actor_name, obs.occurred_at.isoformat()) == expected
    assert obs.id and obs.url and obs.url.startswith("https://") or obs.source in {"manual", "agent"}


def test_bot_activity_is_observed_and_marked_but_bot_comments_are_skipped() -> None:
    (pr,) = normalize_eventbridge(load_event("eventbridge/github_pull_request_opened_bot")).observations
    assert pr.metadata["bot"] is True
    event = load_event("eventbridge/github_issue_comment")
    event["detail"]["comment"]["user"] = {"login": "ci-bot[bot]", "type": "Bot"}
    skipped = normalize_eventbridge(event).skipped
    assert skipped is not None and "bot ci-bot[bot]" in skipped.reason
