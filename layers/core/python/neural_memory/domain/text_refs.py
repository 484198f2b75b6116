"""The code a claim names in its words: paths and file names with an extension
(``src/auth/middleware.ts``, ``cookies.py``), backticked paths (``src/auth/``) and links to a file
on GitHub (``https://github.com/owner/repo/blob/main/x.py``, in the repository the link names),
read from its title and content, so a note that says "``formparser.py`` now streams" is about that file without
``codeRefs`` (which stays the explicit way, and the way to name the repository).

A name read from text may be a whole path, its tail (``werkzeug/http.py``) or a file name
(``http.py``): it is stored as ``repository:tail`` (``*`` when the claim does not say which
repository: ``metadata.repo``), and a push writes the tails of every path it touched as well
(``suffixes``), so the two meet exactly, through the same index as ``codeRefs``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

ANY_REPOSITORY = "*"
EXTENSIONS = (
    "py pyi pyx js jsx mjs cjs ts tsx go rs rb java kt kts scala c h cc cpp hpp cs php swift m sh bash zsh "
    "md rst txt toml cfg ini yml yaml json lock sql html css scss vue svelte proto tf "
    # build and editor files a repository keeps beside its code (MANIFEST.in, requirements/*.in)
    "in vim el lua dart erl hs ml clj groovy gradle xml j2 jinja tmpl ps1 bat mk cmake ipynb"
).split()
# A path-like token: optional folders, a name, a known extension; not part of a URL, an email, a
# dotted module name or a longer word.
_PATH = re.compile(
    r"(?<![\w@/.:\-~])((?:[\w.\-]+/)*[\w\-][\w.\-]*\.(?:" + "|".join(EXTENSIONS) + r"))(?![\w/\-])",
)
_BACKTICKED = re.compile(r"`+([\w.\-]+(?:/[\w.\-]+)+/?)`+")  # a path without an extension, quoted as code
_URL = re.compile(r"\b[a-z][a-z0-9+.\-]*://\S+", re.IGNORECASE)
# A file on GitHub: its repository and its path at some ref (a link names the repository it is in,
# so a link to another project's changelog is not a claim about this one's).
_BLOB = re.compile(
    r"https?://github\.com/([A-Za-z0-9_.\-]{1,100}/[A-Za-z0-9_.\-]{1,100})/blob/[^/\s]+/([\w.\-/]*[\w\-])",
    re.IGNORECASE,
)
MAX_PATH_CHARS = 500  # a code ref's path, as the API takes one (``CodeRef.paths``)
MAX_TEXT_REFS = 50


def paths_in_text(text: str) -> list[str]:
    """The paths and file names ``text`` names, once each, in order (URLs left out)."""
    text = _URL.sub(" ", text)
    found: dict[str, None] = {}
    for match in (*_PATH.finditer(text), *_BACKTICKED.finditer(text)):
        path = match.group(1).removeprefix("./").removeprefix("/")
        if path and ".." not in path and not path.startswith("-") and len(path) <= MAX_PATH_CHARS:
            found[path.rstrip("/")] = None
    return list(found)[:MAX_TEXT_REFS]


def text_refs(text: str, repository: str | None) -> list[str]:
    """``paths_in_text`` as stored code refs, ``repository:path`` (``*`` when unknown), then the
    files its GitHub links name, in the repository each link names."""
    named = [f"{repository or ANY_REPOSITORY}:{path}" for path in paths_in_text(text)]
    linked = [
        f"{m.group(1)}:{m.group(2)}"
        for m in _BLOB.finditer(text)
        if ".." not in m.group(2) and len(m.group(2)) <= MAX_PATH_CHARS
    ]
    return list(dict.fromkeys(named + linked))[:MAX_TEXT_REFS]


def suffixes(refs: Sequence[str]) -> list[str]:
    """Every tail of every ``repository:path`` ref, with its repository and with ``*``: what a claim
    naming the file by a tail of its path (or without its repository) is stored as."""
    found: dict[str, None] = {}
    for ref in refs:
        repository, _, path = ref.partition(":")
        parts = path.split("/")
        for start in range(len(parts)):
            tail = "/".join(parts[start:])
            if start:
                found[f"{repository}:{tail}"] = None
            found[f"{ANY_REPOSITORY}:{tail}"] = None
    return list(found)


# A name as code spells it: snake_case, camelCase or CamelCase with a hump, dotted (a.b), a call
# (name()), or anything in backticks: what a note says the code is, which a change may rewrite.
_CODE_NAME = re.compile(
    r"`([^`\s]{2,100})`|\b([A-Za-z_][\w.]*(?:_[\w.]*|[a-z][A-Z][\w.]*|\.[A-Za-z_]\w*))\b|\b(\w{2,})\(\)"
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def code_names(text: str) -> set[str]:
    """The names of code ``text`` spells as code, lower-cased, each dotted name also by its parts
    (``Headers.set`` -> ``headers.set``, ``headers``, ``set``), file names left out (a path is a
    code ref, not a name)."""
    text = _URL.sub(" ", text)
    paths = set(paths_in_text(text))
    found: set[str] = set()
    for match in _CODE_NAME.finditer(text):
        name = next(group for group in match.groups() if group)
        if name in paths or any(name.endswith("." + ext) for ext in EXTENSIONS):
            continue
        parts = [p for p in _WORD.findall(name) if len(p) > 2]
        found.add(name.lower().strip("."))
        if len(parts) > 1:
            found.update(p.lower() for p in parts if "_" in p or not p.islower() or len(p) > 3)
    return found


def words_of(text: str) -> set[str]:
    """Every identifier-like word of ``text``, lower-cased (what a change's message and code say)."""
    return {word.lower() for word in _WORD.findall(text)}
