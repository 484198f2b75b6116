"""The truth ``eval-history`` scores against, taken from the repository itself: the changelog's
entries and the pull requests they cite, each source file's owners by commits (its "who knows"),
and the paths a commit message names (its claims). Nothing here searches: ``local/evaluation/history.py``
imports the history and scores the service against these."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from neural_memory.local.history.git import GitHistory


CHANGELOGS = (
    "CHANGES.rst",
    "CHANGES.md",
    "CHANGELOG.md",
    "CHANGELOG.rst",
    "HISTORY.rst",
    "HISTORY.md",
    "NEWS.rst",
    "docs/changelog.md",
    "docs/changelog.rst",
    "doc/en/changelog.rst",
)
MAX_QUERY_CHARS = 400

# Sphinx roles (:pr:`12`) and MyST's ({pr}`12`), GitHub's #12 and pull links.
_PR_CITATION = re.compile(r"(?::(?:pr|pull):|\{(?:pr|pull)\})`(\d+)`|(?<![\w&/])#(\d+)\b|/pull/(\d+)")
_ISSUE_CITATION = re.compile(r"(?::(?:issue|ghsa|cve):|\{(?:issue|ghsa|cve)\})`[^`]*`")  # a citation, not words
_ROLE = re.compile(r"(?::[a-z]+:|\{[a-z]+\})`([^`<]*)(?:<[^>]*>)?`")  # :func:`name`, {func}`name` -> name
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")  # [text](url) -> text
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")


_YEAR = re.compile(r"\b(19[89]\d|20\d\d)\b")
_DATE = re.compile(r"\b((?:19[89]|20\d)\d)-\d\d-\d\d\b")
_UNDERLINE = re.compile(r"^([-=~^*#])\1{2,}\s*$")
_RELEASED = re.compile(r"^[\W_]*released\b", re.IGNORECASE)  # "Released 2023-04-28", "*Released on ...*"


@dataclass(frozen=True)
class ChangelogEntry:
    """One bullet of a changelog: its words (citations and markup removed), the PRs it cites, and
    the year its version was released (None: unreleased, or the changelog gives no dates)."""

    text: str
    prs: tuple[int, ...]
    released: int | None = None


def _is_heading(lines: list[str], n: int) -> bool:
    """Whether line ``n`` is a heading: Markdown's ``#``, or reStructuredText's underlined title."""
    line = lines[n]
    underlined = n + 1 < len(lines) and bool(_UNDERLINE.match(lines[n + 1])) and bool(line.strip())
    return (line.startswith("#") or underlined) and not _UNDERLINE.match(line)


def _year_of(line: str) -> int | None:
    """The year a heading or "Released ..." line gives: a full date's (``2020.12.1 (2021-01-05)``
    was released in 2021), else the last year it names."""
    date = _DATE.search(line)
    if date:
        return int(date.group(1))
    years = _YEAR.findall(line)
    return int(years[-1]) if years else None


def changelog_entries(text: str) -> list[ChangelogEntry]:
    """The bullets of a changelog (reStructuredText or Markdown) that cite a pull request, each
    with its version's release year: the year its heading or its "Released ..." line gives. A
    version without one takes the year of the nearest dated one above it when the changelog is
    newest first (most dated versions are older than the one above them): it was released then
    at the latest."""
    bullets: list[tuple[list[str], int | None, int | None]] = []  # lines, own year, the year above
    current: list[str] | None = None
    own: int | None = None
    above: int | None = None
    years: list[int] = []
    lines = text.splitlines()
    for n, line in enumerate(lines):
        match = _BULLET.match(line)
        heading = match is None and _is_heading(lines, n)
        if heading or (match is None and _RELEASED.match(line)):
            year = _year_of(line)
            if heading or year is not None:  # a new version: its own date, or none yet
                own = year
            if year is not None:
                above = year
                years.append(year)
        if match:
            current = [match.group(2)]
            bullets.append((current, own, above))
        elif current is not None and line.strip() and line[:1].isspace():
            current.append(line.strip())
        elif line.strip():  # a heading or paragraph ends the bullet
            current = None
    pairs = list(zip(years, years[1:], strict=False))
    newest_first = sum(a >= b for a, b in pairs) > len(pairs) / 2
    entries = []
    for parts, own_year, year_above in bullets:
        released_in = own_year if own_year is not None else (year_above if newest_first else None)
        raw = " ".join(part for part in parts if part).strip()
        prs = tuple(int(next(g for g in m.groups() if g)) for m in _PR_CITATION.finditer(raw))
        if not prs:
            continue
        words = _ISSUE_CITATION.sub(" ", _PR_CITATION.sub(" ", raw))
        words = _LINK.sub(r"\1", _ROLE.sub(r"\1", words))
        words = re.sub(r":[a-z]+:|\{[a-z]+\}", " ", words).replace("``", "").replace("`", "").replace("**", "")
        words = re.sub(r"\(\s*[,\s]*\)", " ", words)  # the brackets a citation left empty
        words = " ".join(words.split()).strip(" .,;")
        if len(words.split()) >= 3:
            entries.append(ChangelogEntry(words[:MAX_QUERY_CHARS], prs, released_in))
    return entries


# Beyond the usual names: a file whose name (case aside) is one of these, with one of these
# extensions or none, at the top of the tree or in a docs folder (``HISTORY.txt``, ``docs/changes.rst``).
_CHANGELOG_STEMS = frozenset({"changes", "changelog", "history", "news", "release-notes", "releases", "whatsnew"})
_CHANGELOG_SUFFIXES = ("", ".md", ".rst", ".txt", ".markdown")
_DOCS_FOLDERS = ("", "docs/", "doc/", "doc/en/")


def find_changelog(history: GitHistory, path: str | None = None) -> tuple[str, str] | None:
    """The changelog in the branch's newest tree, (path, text): ``path`` when given, else the
    first of ``CHANGELOGS``, else the first file of the tree named like one (``_CHANGELOG_STEMS``),
    the top level before the docs folders; a symbolic link read as the file it names. A file
    citing no pull request passes its turn to the next that does (pytest's ``CHANGELOG.rst`` only
    points to ``doc/en/changelog.rst``); with none citing one, the first found."""
    if path:
        text = history.show(path)
        return (path, text) if text is not None else None
    first: tuple[str, str] | None = None
    for candidate in _changelog_candidates(history):
        text = history.show(candidate)
        if text is None:
            continue
        if changelog_entries(text):
            return candidate, text
        first = first or (candidate, text)
    return first


def _changelog_candidates(history: GitHistory) -> Iterator[str]:
    """``CHANGELOGS``, then the tree's files named like one, the top level first."""
    yield from CHANGELOGS
    files = history.files()
    for folder in _DOCS_FOLDERS:
        for name in sorted(files):
            rest = name[len(folder) :] if name.startswith(folder) else None
            if rest is None or "/" in rest or name in CHANGELOGS:
                continue
            stem, dot, suffix = rest.lower().partition(".")
            if stem in _CHANGELOG_STEMS and (dot + suffix) in _CHANGELOG_SUFFIXES:
                yield name


@dataclass(frozen=True)
class Topic:
    """A file of the repository as a subject: the words of its name, and who wrote it."""

    path: str
    query: str
    owners: tuple[str, ...]  # the authors of the most commits touching it, over the whole history (tied: all)
    recent_owners: tuple[str, ...]  # the same over the last three years (none: untouched since)
    # The same two counting only the commits that touched this very path (no rename followed):
    # the truth before renames were followed, kept to compare with.
    path_owners: tuple[str, ...] = ()
    path_recent_owners: tuple[str, ...] = ()


SOURCE_SUFFIXES = (".py", ".js", ".ts", ".tsx", ".go", ".rs", ".rb", ".java", ".c")
_GENERIC_STEMS = {"__init__", "base", "utils", "util", "common", "core", "main", "default", "types", "api", "index"}
TOPICS = 25
RECENT = timedelta(days=3 * 365)


def topics(history: GitHistory, limit: int = TOPICS, recent: timedelta = RECENT) -> list[Topic]:
    """The ``limit`` source files (no tests, docs or changelogs) touched by the most commits, each
    phrased by its name's words (``cache_control.py`` -> "cache control"; a generic name takes its
    folder's: ``_transports/default.py`` -> "transports default"), with its owners by commit count
    (``recent_owners``: over the ``recent`` before the newest commit)."""
    from neural_memory.local.history.identities import Identities

    graph = history.graph()
    who = Identities(graph.values(), owner=history.owner)
    present = set(history.files())
    names = history.names()
    on_main = {c.sha: n for n, c in enumerate(history.commits())}
    newest = max((datetime.fromisoformat(c.committed) for c in graph.values()), default=None)
    by_path: dict[str, list[tuple[str, datetime]]] = {}
    under_path: dict[str, list[tuple[str, datetime]]] = {}  # this very path's commits only
    for sha, changed in history.changes().items():
        commit = graph.get(sha)
        if commit is None or len(commit.parents) > 1:
            continue
        at = datetime.fromisoformat(commit.committed)
        index = on_main[sha] if sha in on_main else names.index_at(at)
        # Each path under its newest name: a file's history goes on through its moves and renames.
        for path in {names.newest(p, index) for p in changed.paths}:
            if path in present and _is_source(path):
                by_path.setdefault(path, []).append((who.of(commit), at))
        for path in changed.paths:
            under_path.setdefault(path, []).append((who.of(commit), at))
    chosen = sorted(by_path, key=lambda p: (-len(by_path[p]), p))[:limit]
    found = []
    for path in chosen:
        authors, lately = _people(by_path[path], newest, recent)
        if not authors:
            continue
        own, own_lately = _people(under_path.get(path, []), newest, recent)
        found.append(Topic(path, _phrase(path), _most(authors), _most(lately), _most(own), _most(own_lately)))
    return found


def _people(
    touched: list[tuple[str, datetime]], newest: datetime | None, recent: timedelta
) -> tuple[list[str], list[str]]:
    """The authors of ``touched`` (bots left out), over the whole history and its ``recent``."""
    authors = [a for a, _ in touched if not a.endswith("[bot]")]
    lately = [a for a, at in touched if newest and at >= newest - recent and not a.endswith("[bot]")]
    return authors, lately


def _is_source(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    if not name.endswith(SOURCE_SUFFIXES) or name.startswith(("changes", "changelog", "readme", "history")):
        return False
    return not any(p.startswith(("test", "doc", "example", ".")) or p in {"tests", "docs", "examples"} for p in parts)


def _phrase(path: str) -> str:
    parts = path.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    words = [stem] if stem not in _GENERIC_STEMS or len(parts) < 2 else [parts[-2], stem]
    return " ".join(w.strip("_").replace("_", " ").replace("-", " ") for w in words if w.strip("_")).strip()


def _most(names: list[str]) -> tuple[str, ...]:
    """The most frequent of ``names``, all of them when tied (a file two people each touched twice
    in three years has no one top author: either answer is right), by name."""
    counts = Counter(names)
    top = max(counts.values(), default=0)
    return tuple(sorted(n for n, c in counts.items() if c == top))


_TOKEN_SPLIT = re.compile(r"[\s`'\"(),;<>\[\]{}*]+")


def named_paths(text: str, known: set[str], by_name: dict[str, set[str]], repo: str) -> dict[str, set[str]]:
    """The truth of what ``text`` names, the plain way: each whitespace- or punctuation-delimited
    token (a GitHub ``/blob/<ref>/`` link into ``repo`` read as its path; a link into another
    repository names none of this one's files) that is a path the repository ever had, or a tail
    of one; by token, the paths it names."""
    found: dict[str, set[str]] = {}
    for raw in _TOKEN_SPLIT.split(text):
        token = raw.strip(".:!?")
        if "/blob/" in token:
            linked, _, rest = token.partition("/blob/")
            if not linked.lower().endswith("github.com/" + repo.lower()):
                continue
            token = rest.partition("/")[2].partition("#")[0]
        token = token.removeprefix("./")
        if "." not in token or not token:
            continue
        name = token.rsplit("/", 1)[-1]
        paths = {p for p in by_name.get(name, ()) if p == token or p.endswith("/" + token)}
        if paths:
            found[token] = paths
    return found
