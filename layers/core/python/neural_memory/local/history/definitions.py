"""The functions and classes a commit changed, read from its diff: what a pull request did, in the
names its code gives it (a changelog says "``quote_header_value`` quotes the empty string"; the
merge's subjects say "refactor parse and dump header functions").

A name counts when the commit adds, removes or edits lines inside its definition (git's hunk
header, with git's own per-language rules for where a definition starts) or adds or removes the
line that defines it. A hunk that starts by adding or removing a definition is that definition's,
not the one above it (with no context lines, git names the nearest definition before the hunk).
Only source files count: a changelog or a README names everything.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath

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
# Languages whose functions are declared by a signature alone (``int parse(char *s)``,
# ``public void run()``): a hunk header there names the function before its parenthesis.
_SIGNATURE_SUFFIXES = frozenset(
    {".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".java", ".cs", ".php", ".js", ".jsx", ".mjs", ".cjs", ".ts"}
    | {".tsx", ".swift", ".scala", ".kt", ".kts"}
)
SOURCE_SUFFIXES = frozenset(
    {f".{ext}" for exts in DRIVERS.values() for ext in exts} | _SIGNATURE_SUFFIXES | {".ex", ".exs", ".lua", ".sh"}
)
_MODIFIERS = (
    r"(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|internal|static|final|abstract|async|unsafe"
    r"|const|extern|override|sealed|partial|data|case|open|inline|virtual|local|suspend)\s+)*"
)
_KEYWORDS = (
    r"def(?:p|module|macro)?|class|func(?:\s*\([^)]*\))?|function\*?|fun|fn|struct|enum|union|trait|interface"
    r"|module|type|impl(?:\s*<[^>]*>)?(?:\s+[\w:]+(?:<[^>]*>)?\s+for)?"
)
# The name must end the line or be followed by what follows a name being defined: not another
# word (``class is a helper`` in a docstring, ``struct stat st;``, ``static struct entry *find(``).
_DEFINITION = re.compile(
    rf"^\s*{_MODIFIERS}(?:{_KEYWORDS})\s+(?:self\.)?([A-Za-z_$][\w$]*)"
    r"\s*(?:$|[(:<{\[=.]|(?:extends|implements|for|where|struct|interface|do)\b)"
)
_SIGNATURE = re.compile(r"^[\w\s<>\[\],.*&:~]*?\b([A-Za-z_]\w*)\s*\([^;]*$")
_NOT_NAMES = frozenset(
    {"if", "for", "while", "switch", "return", "catch", "sizeof", "elif", "else", "new", "throw", "do", "self"}
    | {"extends", "implements", "function", "typeof", "await", "yield", "with", "assert", "print"}
    | {"describe", "it", "test", "expect"}  # a JavaScript test's calls, not definitions
)


def attributes() -> str:
    """A gitattributes text giving each source file its language's diff driver."""
    return "".join(f"*.{ext} diff={driver}\n" for driver, exts in DRIVERS.items() for ext in exts)


def defined_name(line: str, *, signature: bool = False) -> str | None:
    """The name ``line`` defines (``def quote(``, ``class Headers:``, ``func (c *Client) Do(``,
    ``impl Display for Headers {``), or None; with ``signature``, also the function a C-like
    signature declares (``public void run() {``). A dunder (``__init__``) says nothing of what
    changed."""
    text = line.rstrip()
    if text.endswith(";"):  # a declaration or a statement, not a definition
        return None
    match = _DEFINITION.match(text) or (_SIGNATURE.match(text) if signature else None)
    if match is None:
        return None
    name = match.group(1)
    if name in _NOT_NAMES or (name.startswith("__") and name.endswith("__")):
        return None
    return name


class DiffDefinitions:
    """Reads a ``git log -p -U0`` stream line by line (``start`` at each commit) and keeps for each
    commit the names its source hunks changed, the most often first."""

    def __init__(self) -> None:
        self.by_commit: dict[str, list[str]] = {}
        self._sha = ""
        self._counts: Counter[str] = Counter()
        self._source = False
        self._signatures = False
        self._header: str | None = None  # the hunk's header name, until its first changed line says whose

    def start(self, sha: str) -> None:
        self._close()
        self._sha = sha

    def feed(self, line: str) -> None:
        if line.startswith("diff --git "):
            self._settle()
            suffix = PurePosixPath(line.rsplit(" b/", 1)[-1].strip().strip('"')).suffix.lower()
            self._source = suffix in SOURCE_SUFFIXES
            self._signatures = suffix in _SIGNATURE_SUFFIXES
        elif not self._source or line.startswith(("+++ ", "--- ")):
            return
        elif line.startswith("@@"):
            self._settle()
            self._header = defined_name(line.split("@@", 2)[-1], signature=self._signatures)
        elif line.startswith(("+", "-")):
            name = defined_name(line[1:])
            if self._header is not None and line[1:].strip():
                if name is None:  # the hunk edits inside the definition its header names
                    self._counts[self._header] += 1
                self._header = None
            if name:
                self._counts[name] += 1

    def finish(self) -> dict[str, list[str]]:
        self._close()
        return self.by_commit

    def _settle(self) -> None:
        """A hunk that changed only blank lines changed its header's definition."""
        if self._header is not None:
            self._counts[self._header] += 1
            self._header = None

    def _close(self) -> None:
        self._settle()
        if self._sha and self._counts:
            self.by_commit[self._sha] = [name for name, _ in self._counts.most_common(MAX_DEFINITIONS)]
        self._counts = Counter()
        self._source = False
