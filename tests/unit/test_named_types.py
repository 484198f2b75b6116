"""Observation types a query names, as whole words in any case."""

from __future__ import annotations

import pytest
from neural_memory.domain.tiers import DEFAULT_POLICY
from neural_memory.search.named_types import TYPE_PHRASES, named_types

DEPLOYMENTS = {"deployment_created", "deployment_succeeded", "deployment_error", "deployment_canceled"}


@pytest.mark.parametrize(
    ("query", "types"),
    [
        ("the push that capped waitlist offers", {"push"}),
        ("who force-pushed to the time zone branch?", {"push"}),
        ("Commit pinning the postgres driver", {"push"}),
        ("did the week view deploy to production?", DEPLOYMENTS),
        ("production deployment after the switch to Node 20", DEPLOYMENTS),
        ("pull request that adds exports", {"pull_request_opened", "pull_request_merged", "pull_request_closed"}),
        ("which PR fixed Safari?", {"pull_request_opened", "pull_request_merged", "pull_request_closed"}),
        ("comments on the export issue", {"issue_comment", "issue_opened", "issue_closed"}),
        ("the ADR on feature flags", {"adr"}),
        ("in which API release did bookings expire", {"release"}),
    ],
)
def test_types_named(query: str, types: set[str]) -> None:
    assert named_types(query) == types


@pytest.mark.parametrize(
    "query",
    [
        "why do patients pay on a page hosted elsewhere?",  # no type word
        "pushing back on the deadline",  # "pushing" is not one of a push's forms
        "the deployer's credentials",  # a word that merely starts like one
        "gene expression in pre-mRNA processing",  # "pr" inside a word
        "",
    ],
)
def test_nothing_named(query: str) -> None:
    assert named_types(query) == frozenset()


def test_every_named_type_is_a_built_in_type() -> None:
    # The phrases name the normalizers' types (the default policy's), not topics or invented types
    assert {t for _, types in TYPE_PHRASES for t in types} <= set(DEFAULT_POLICY)
