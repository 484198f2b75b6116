"""Browser tests: Playwright driving a real Chromium against the real ``neural-memory serve``.

The browser is the system Chromium (Debian's ``chromium`` package, which ``make test`` installs
when it can; Playwright's own browser download is not needed). Without it these tests skip on a
developer's machine, and fail in CI (``CI=true``): a console nobody ran is not tested.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.serve import Served, serve

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser, Page

CHROMIUM_NAMES = ("chromium", "chromium-browser")


def chromium_path() -> str | None:
    """The system Chromium: ``NM_CHROMIUM`` if set, else the first on PATH."""
    configured = os.environ.get("NM_CHROMIUM")
    if configured:
        return configured if Path(configured).exists() else None
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


# Package scope, not session: Playwright's sync API runs an event loop on this thread while it is
# open, and every later test that starts its own loop (anyio.run, the MCP client) would fail.
@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    executable = chromium_path()
    if executable is None:
        message = "no system Chromium: `apt-get install chromium` (make test does it when run as root)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: the browser tests must run: {message}")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="package")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``neural-memory serve`` with the sample events, shared by the browser tests."""
    with serve(tmp_path_factory.mktemp("console")) as running:
        yield running


class Watched:
    """A page and what it did: every request's URL, every dialog, every script error."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def accept_dialogs(self) -> None:
        """Accept confirm() (deleting), recording its message."""
        self.page.on("dialog", self._accept)

    def _accept(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.accept()


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    """A fresh browser tab (its own sessionStorage) at 1440 px."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(20_000)
    # expect() has its own timeout, 5 s by default: a busy machine's server can take longer
    from playwright.sync_api import expect

    expect.set_options(timeout=20_000)
    yield Watched(page)
    context.close()


def sign_in(watched: Watched, served: Served, query: str = "") -> Page:
    """Open the console (at ``query``, e.g. ``?q=deploy``) and type the key once."""
    page = watched.page
    page.goto(served.url + "/console" + query)
    page.get_by_label("Key", exact=True).fill(served.key)
    page.get_by_role("button", name="Use this key").click()
    return page
