"""The console's engineering views in a real Chromium against the real local server with the
sample events: the Open drawer's lineage timeline, the "Who knows" panel beside the results, and
the "possibly stale" badge."""

from __future__ import annotations

import base64
import re
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Watched, sign_in

if TYPE_CHECKING:
    from tests.helpers.serve import Served

pytestmark = [pytest.mark.browser, pytest.mark.integration]

FAILED_DEPLOY = "vercel-dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx-error"
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


def test_who_knows_shows_beside_the_results_and_choosing_an_actor_filters_by_them(
    watched: Watched, served: Served
) -> None:
    # When the deploy failure is searched
    page = sign_in(watched, served, "?q=deploy+failure")
    # Then the panel beside the results names octocat first, with what they did and their evidence
    experts = page.locator("#experts li.expert")
    expect(experts.first.locator(".actor")).to_have_text("octocat")
    expect(experts.first.locator(".score-label")).to_have_text("score 1.00")
    expect(experts.first.locator(".did")).to_contain_text("note")
    expect(experts.first.locator(".evidence li").first).to_be_visible()
    assert not [n for n in experts.locator(".actor").all_inner_texts() if n.endswith("[bot]")]
    # When an evidence title is chosen, Then that observation opens
    title = experts.first.locator(".evidence button").first.inner_text()
    experts.first.locator(".evidence button").first.click()
    expect(page.locator("#record-title")).to_have_text(title)
    page.locator("#record-close").click()
    # When the actor is chosen, Then the results are filtered by them (the chip and the URL say so)
    experts.first.locator(".actor").click()
    expect(page.locator('.chip[data-value="octocat"]')).to_have_attribute("aria-pressed", "true")
    assert "actor=octocat" in page.url
    octocat = page.locator(".badge.actor", has_text="octocat")
    expect(page.locator("li.result").first.locator(".badge.actor")).to_have_text("octocat")
    expect(page.locator("li.result").filter(has_not=octocat)).to_have_count(0)
    assert watched.errors == []


def test_a_result_a_later_push_touched_is_badged_possibly_stale(watched: Watched, served: Served) -> None:
    # Given the sample decision about the middleware, which a later push touched
    page = sign_in(watched, served, "?q=refresh+sessions+in+edge+middleware&mode=keyword")
    item = page.locator('[id="result-decision-session-refresh-edge"]')
    # Then its result carries the badge with the commit, and a fresh result none
    expect(item.locator(".badge.stale")).to_have_text("possibly stale (7f3a9b2)")
    assert "7f3a9b2c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f70" in (item.locator(".badge.stale").get_attribute("title") or "")
    expect(page.locator("li.result .badge.stale")).to_have_count(1)
    # And its record says so too
    item.get_by_role("button", name="Open").click()
    expect(page.locator("#record dd").last).to_have_text("7f3a9b2c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f70")
    assert watched.errors == []


# The rows of a PNG holding ink (a pixel darker than mid-grey), decoded by the browser itself in a
# blank page (the console's CSP rightly refuses data: images).
_INKED_ROWS = """async (png) => {
  const image = new Image();
  image.src = `data:image/png;base64,${png}`;
  await image.decode();
  const canvas = Object.assign(document.createElement("canvas"), { width: image.width, height: image.height });
  const context = canvas.getContext("2d");
  context.drawImage(image, 0, 0);
  const { data } = context.getImageData(0, 0, image.width, image.height);
  const rows = [];
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const i = 4 * (y * image.width + x);
      if (data[i] + data[i + 1] + data[i + 2] < 3 * 128) { rows.push(y); break; }
    }
  }
  return rows;
}"""

# The lines a title's text is laid out on (one client rect per line of a range over it).
_LINES = """(title) => {
  const range = document.createRange();
  range.selectNodeContents(title);
  const tops = [...new Set([...range.getClientRects()].map((r) => Math.round(r.top)))].sort((a, b) => a - b);
  const height = parseFloat(getComputedStyle(title).lineHeight);
  return tops.map((top) => [top, top + height]);
}"""


def test_each_evidence_bullet_sits_on_the_first_line_of_its_wrapped_title(watched: Watched, served: Served) -> None:
    # Given who knows about the deploy failure, in the narrow panel beside the results, where an
    # evidence title wraps
    page = sign_in(watched, served, "?q=deploy+failure")
    expect(page.locator("#experts li.expert").first).to_be_visible()
    titles = page.locator("#experts .evidence li button")
    wrapped = [t for t in titles.all() if len(t.evaluate(_LINES)) >= 2]
    assert wrapped, titles.all_inner_texts()
    blank = page.context.new_page()
    for title in wrapped:
        lines = title.evaluate(_LINES)
        item = title.locator("xpath=ancestor::li[1]").bounding_box()
        assert item is not None
        # When the strip left of the entry, where its bullet is drawn, is looked at
        strip = page.screenshot(
            clip={"x": item["x"] - 14, "y": item["y"], "width": 12, "height": item["height"]}, animations="disabled"
        )
        inked = [item["y"] + row for row in blank.evaluate(_INKED_ROWS, base64.b64encode(strip).decode())]
        # Then the bullet is there, on the title's first line and no other
        first_top, first_bottom = lines[0]
        assert inked, title.inner_text()
        assert all(first_top <= y <= first_bottom for y in inked), (title.inner_text(), lines, inked)
    blank.close()
    assert watched.errors == []


def test_the_lineage_says_how_long_after_each_other_its_steps_came(watched: Watched, served: Served) -> None:
    # Given the failed deployment, a day and more ago, among the results
    page = sign_in(watched, served, "?q=deployment+failed+console&mode=keyword&source=vercel")
    page.locator(f'[id="result-{FAILED_DEPLOY}"]').get_by_role("button", name="Open").click()
    steps = page.locator("#lineage li.step")
    expect(steps.locator("time")).not_to_have_count(0)
    expect(steps.last.locator("time")).not_to_have_text("")
    labels = {step.get_attribute("data-id"): step.locator("time").inner_text() for step in steps.all()}
    # Then the oldest step says how long ago it was, in hours or days, never a calendar word
    first, *later = labels.values()
    assert re.fullmatch(r"\d+ (hours?|days?) ago", first), labels
    # And each later step how long after the one before it: the failed build minutes after it
    # started, its cancellation minutes after that, not "yesterday" for all three
    assert all(re.fullmatch(r"(\d+ \w+ later|at the same time)", label) for label in later), labels
    assert re.fullmatch(r"\d+ minutes? later", labels[FAILED_DEPLOY]), labels
    assert re.fullmatch(r"\d+ minutes? later", labels[FAILED_DEPLOY.replace("-error", "-canceled")]), labels
    # And each says its exact time on hover
    assert all(t for t in steps.locator("time").evaluate_all("ts => ts.map(t => t.title && t.dateTime)"))
    # And the results' times are durations too: never "yesterday", "last week" or "tomorrow"
    page.locator("#record-close").click()
    for label in page.locator("li.result time").all_inner_texts():
        assert re.fullmatch(r"\d+ \w+ ago", label), label
    assert watched.errors == []


def test_the_staleness_toggle_lists_only_what_went_stale_or_only_what_did_not(watched: Watched, served: Served) -> None:
    # Given a search whose results hold the stale decision and fresh observations
    page = sign_in(watched, served, "?q=refresh+sessions+in+edge+middleware&mode=keyword")
    expect(page.locator('[id="result-decision-session-refresh-edge"]')).to_be_visible()
    expect(page.locator("li.result")).not_to_have_count(1)
    # When "stale only" is chosen, Then only what went stale is listed, and the URL says so
    page.locator('#freshness .chip[data-fresh="stale"]').click()
    expect(page.locator('#freshness .chip[data-fresh="stale"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator("li.result")).to_have_count(1)
    expect(page.locator("li.result .badge.stale")).to_have_count(1)
    assert "fresh=stale" in page.url
    # When "fresh only" is chosen, Then the stale decision is left out and the rest shows
    page.locator('#freshness .chip[data-fresh="fresh"]').click()
    expect(page.locator('[id="result-decision-session-refresh-edge"]')).to_have_count(0)
    expect(page.locator("li.result")).not_to_have_count(0)
    expect(page.locator("li.result .badge.stale")).to_have_count(0)
    # And clearing the filters clears it
    page.locator("#clear-filters").click()
    expect(page.locator('#freshness .chip[data-fresh=""]')).to_have_attribute("aria-pressed", "true")
    assert "fresh=" not in page.url
    assert watched.errors == []
