"""The search console: one static page (HTML, CSS and JavaScript modules shipped in this package,
no build step) that people use in a browser. It holds no data and no secret — the API key is
typed into the page and every call it makes goes to the documented API on the same origin — so
it is served without authorization, by the same handler in AWS and locally.

The strict Content-Security-Policy allows scripts, styles and requests from the page's own
origin only and no inline script at all, so text an observation carries can never run.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from neural_memory.errors import NotFound

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
PAGE = "index.html"


@dataclass(frozen=True)
class ConsoleFile:
    """One file of the console, with the headers it is served with."""

    body: str
    headers: dict[str, str]


def console_file(name: str = PAGE) -> ConsoleFile:
    """The page (``index.html``) or one of its assets, by file name; ``NotFound`` for any other
    name (only plain names of the shipped files are served: no paths)."""
    suffix = name[name.rfind(".") :] if "." in name else ""
    if "/" in name or "\\" in name or name.startswith(".") or suffix not in _TYPES:
        raise NotFound(f"no console file {name!r}")
    body = _read(name)
    if body is None:
        raise NotFound(f"no console file {name!r}")
    headers = {
        "Content-Type": _TYPES[suffix],
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",  # revalidated on every load: a deploy shows at once
    }
    return ConsoleFile(body, headers)


@lru_cache(maxsize=32)  # bounded: a request may name any file, existing or not
def _read(name: str) -> str | None:
    """A shipped file's text, read once per process (the package's files do not change under it)."""
    file = resources.files(__package__) / "static" / name
    return file.read_text(encoding="utf-8") if file.is_file() else None
