"""The console's engineering views in a real Chromium against the real local server with the
sample events: the Open drawer's lineage timeline."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Watched, sign_in

if TYPE_CHECKING:
    from tests.helpers.serve import Served

pytestmark = [pytest.mark.browser, pytest.mark.integration]

FAILED_DEPLOY = "vercel-uHp5NnBmQ3ZqX2p6TWd4"
MERGED_PR = "github-pr-acme.console-482-pull_request_merged"
PR_TITLE = "PR #482 merged: Move session refresh into edge middleware"


def test_open_shows_the_lineage_as_a_timeline_whose_entries_open(watched: Watched, served: Served) -> None:
    # Given the failed deployment among the results
    page = sign_in(watched, served, "?q=deployment+failed+console&mode=keyword&source=vercel")
    item = page.locator(f'[id="result-{FAILED_DEPLOY}"]')
    # When it is opened
    item.get_by_role("button", name="Open").click()
    # Then its timeline shows, oldest first, the pull request merged as the commit it carried, the
    # push of that commit, and itself (not a link), each entry's link named
    steps = page.locator("#lineage li.step")
    expect(steps.filter(has_text=PR_TITLE).locator(".badge.link")).to_have_text(["commit 7f3a9b2"])
    expect(steps.filter(has_text="Push to main").locator(".badge.link")).to_have_text(["commit 7f3a9b2"])
    expect(page.locator("#lineage li.step.subject strong")).to_have_text("Deployment failed: console (production)")
    order = [step.get_attribute("data-id") for step in steps.all()]
    assert order.index(MERGED_PR) < order.index(FAILED_DEPLOY)
    # When the pull request is opened from the timeline, Then the dialog shows it and its own lineage
    steps.filter(has_text=PR_TITLE).get_by_role("button").click()
    expect(page.locator("#record-title")).to_have_text(PR_TITLE)
    expect(page.locator("#lineage li.step.subject strong")).to_have_text(PR_TITLE)
    expect(page.locator("#lineage li.step").filter(has_text="Deployment failed")).not_to_have_count(0)
    assert watched.errors == []
