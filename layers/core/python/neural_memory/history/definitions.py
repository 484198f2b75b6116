"""The functions and classes a commit changed, read from its diff: what a pull request did, in the
names its code gives it (a changelog says "``quote_header_value`` quotes the empty string"; the
merge's subjects say "refactor parse and dump header functions").

A name counts when the commit adds, removes or edits lines inside its definition (git's hunk
header, with git's own per-language rules for where a definition starts) or adds or removes the
line that defines it. Only source files count: a changelog or a README names everything.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

MAX_DEFINITIONS = 30  # names kept per commit, the most edited first

# Git's built-in diff drivers know where a definition starts in these languages (a Python method,
# not only the class around it); the rest of the source files get git's default rule.
DRIVERS = {
    "python": ("py", "pyi"),
    "ruby": ("rb",),
    "golang": ("go",),
    "rust": ("rs",),
    "java": ("java",),
    "kotlin": ("kt", "kts"),
    "php": ("php",),
    "cpp": ("c", "h", "cc", "cpp", "cxx", "hpp", "hh"),
    "csharp": ("cs",),
}
SOURCE_SUFFIXES = frozenset(
    {f".{ext}" for exts in DRIVERS.values() for ext in exts}
    | {".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".swift", ".scala", ".ex", ".exs", ".lua", ".sh"}
)
_MODIFIERS = (
    r"(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|internal|static|final|abstract|async|unsafe)\s+)*"
)
_DEFINITION = re.compile(
    rf"^\s*{_MODIFIERS}(?:def|class|func(?:\s*\([^)]*\))?|function\*?|fn|struct|enum|trait|interface|module|impl)"
    r"\s+([A-Za-z_$][\w$]*)"
)


def attributes() -> str:
    """A gitattributes text giving each source file its language's diff driver."""
    return "".join(f"*.{ext} diff={driver}\n" for driver, exts in DRIVERS.items() for ext in exts)


def is_source(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in SOURCE_SUFFIXES


def defined_name(line: str) -> str | None:
    """The name ``line`` defines (``def quote(``, ``class Headers:``, ``func (c *Client) Do(``),
    or None; a dunder (``__init__``) says nothing of what changed."""
    match = _DEFINITION.match(line)
    if match is None or (match.group(1).startswith("__") and match.group(1).endswith("__")):
        return None
    return match.group(1)


class DiffDefinitions:
    """Reads a ``git log -p -U0`` stream, record by record (``start`` at each commit), and keeps
    for each commit the names its source hunks changed, the most often first."""

    def __init__(self) -> None:
        self.by_commit: dict[str, list[str]] = {}
        self._sha = ""
        self._counts: Counter[str] = Counter()
        self._source = False

    def start(self, sha: str) -> None:
        self._close()
        self._sha = sha

    def feed(self, lines: Iterable[str]) -> None:
        for line in lines:
            if line.startswith("diff --git "):
                self._source = is_source(line.rsplit(" b/", 1)[-1].strip())
            elif not self._source or line.startswith(("+++", "---")):
                continue
            elif line.startswith("@@"):
                name = defined_name(line.split("@@", 2)[-1])
                if name:
                    self._counts[name] += 1
            elif line.startswith(("+", "-")) and (name := defined_name(line[1:])):
                self._counts[name] += 1

    def finish(self) -> dict[str, list[str]]:
        self._close()
        return self.by_commit

    def _close(self) -> None:
        if self._sha and self._counts:
            self.by_commit[self._sha] = [name for name, _ in self._counts.most_common(MAX_DEFINITIONS)]
        self._counts = Counter()
        self._source = False
