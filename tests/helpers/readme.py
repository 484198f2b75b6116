"""The README's code blocks, read as users copy them."""

from __future__ import annotations

from tests.helpers.events import ROOT

README = ROOT / "README.md"


def readme_block(language: str, containing: str) -> str:
    """The README's fenced ``language`` block that contains ``containing``, verbatim."""
    text = README.read_text()
    fence = f"```{language}\n"
    start = 0
    while (start := text.find(fence, start)) != -1:
        end = text.index("```\n", start + len(fence))
        block = text[start + len(fence) : end]
        if containing in block:
            return block
        start = end
    raise AssertionError(f"README.md has no {language} block with {containing!r}")
