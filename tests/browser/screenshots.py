"""The console's screenshots for the README: ``make screenshots`` (or ``python -m
tests.browser.screenshots docs/console``) runs ``neural-memory serve`` with the samples on a
fresh data dir and captures the main states at 1440 px and 390 px wide with the system Chromium."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from tests.browser.conftest import chromium_path
from tests.helpers.serve import Served, serve

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

WIDTHS = {"desktop": (1440, 1000), "phone": (390, 844)}


def _page(browser: Browser, served: Served, width: int, height: int, query: str) -> Page:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(f"{served.url}/console{query}")
    page.get_by_label("Key", exact=True).fill(served.key)
    page.get_by_role("button", name="Use this key").click()
    page.wait_for_load_state("networkidle")
    return page


def capture(browser: Browser, served: Served, empty: Served, out: Path) -> list[Path]:
    """Every state at both widths; the files written."""
    written: list[Path] = []
    for name, (width, height) in WIDTHS.items():

        def shot(page: Page, state: str, name: str = name) -> None:
            page.wait_for_timeout(200)
            path = out / f"{state}-{name}.png"
            page.screenshot(path=path)
            written.append(path)
            page.close()

        page = _page(browser, served, width, height, "?q=why+did+the+console+deploy+fail&source=manual&source=vercel")
        shot(page, "search")
        page = _page(browser, served, width, height, "?q=why+did+the+console+deploy+fail&rerank=balanced")
        page.locator("li.result").first.get_by_text("Explain").click()
        page.locator("li.result").first.locator(".explain").scroll_into_view_if_needed()
        shot(page, "explain")
        page = _page(browser, served, width, height, "?q=Why+did+the+console+deploy+fail%3F&tab=answer")
        page.get_by_role("button", name="Ask").click()
        page.locator(".method").wait_for()
        page.locator("#answer").scroll_into_view_if_needed()
        shot(page, "answer")
        page = _page(browser, served, width, height, "?q=deploy&tier=E&type=release")
        page.locator("li.empty").scroll_into_view_if_needed()
        shot(page, "no-results")
        page = _page(browser, empty, width, height, "")
        page.locator("li.empty").scroll_into_view_if_needed()
        shot(page, "empty-workspace")
        page = _page(browser, served, width, height, "?q=deploy+failure")
        page.locator("#experts li.expert").first.wait_for()
        page.locator("#experts").scroll_into_view_if_needed()
        shot(page, "who-knows")
        page = _page(browser, served, width, height, "?q=deployment+failed+console&mode=keyword&source=vercel")
        failed = page.locator('[id="result-vercel-dpl_8Hn2Jk4Lm6Np8Qr0St2Uv4Wx-error"]')
        failed.get_by_role("button", name="Open").click()
        page.locator("#lineage li.step").first.wait_for()
        page.locator("#record-lineage").scroll_into_view_if_needed()
        shot(page, "lineage")
        page = _page(browser, served, width, height, "?q=refresh+sessions+in+edge+middleware&mode=keyword")
        page.locator('[id="result-decision-session-refresh-edge"] .badge.stale').scroll_into_view_if_needed()
        shot(page, "stale")
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{served.url}/console?q=deploy")
        shot(page, "key")
    return written


def main(out: Path) -> int:
    executable = chromium_path()
    if executable is None:
        print("no system Chromium (apt-get install chromium)", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as full,
        tempfile.TemporaryDirectory() as bare,
        serve(Path(full)) as served,
        serve(Path(bare), samples=False) as empty,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        for path in capture(browser, served, empty, out):
            print(path)
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/console")))
