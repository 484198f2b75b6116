"""Which requests for ``/`` are a browser's (sent to the console) and which an API client's."""

from __future__ import annotations

import pytest
from neural_memory.local.serving.gateway import prefers_html


@pytest.mark.parametrize(
    ("accept", "html"),
    [
        ("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8", True),  # Chromium
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", True),  # Firefox
        ("*/*", False),  # curl
        ("", False),  # no header
        ("application/json", False),
        ("application/json, text/html;q=0.5", False),
        ("text/html;q=0.5, application/json", False),
        ("text/html;q=0.9, application/json;q=0.5", True),
        ("text/*", False),  # no explicit HTML
        ("text/html;q=nonsense", False),
    ],
)
def test_a_browser_prefers_html_and_an_api_client_does_not(accept: str, html: bool) -> None:
    assert prefers_html(accept) is html
