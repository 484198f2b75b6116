"""``neural-memory eval-history PATH``: retrieval on a real repository's history, against truth
taken from the repository itself.

The clone's history is imported as ``import git`` does (``history.git``) into a temporary
embedded store, on today's clock, with the configured settings (``--pr-tier`` sets the tier of
merged pull requests for this run). Then:

- **Changes**: each changelog entry that cites a pull request (``:pr:`123```, ``(#123)``,
  ``/pull/123``) is a query; the answer is that pull request's observations (the merged PR and
  the push of its merge commit). recall@10 (a cited PR among the first 10) and MRR@10, per mode.
- **Remembered**: pull requests and pushes at least two years old, searched by default (hybrid,
  top 10) by the PR's title and by the commit's subject (titles and subjects of four words or
  more that occur once in the history: a generic one names no single change); the share found;
  and how many of those PRs' lineage answers.
"""

from __future__ import annotations

import random
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from neural_memory.history.git import GitHistory
    from neural_memory.models import Tier
    from neural_memory.service import Service
    from neural_memory.settings import Settings

WORKSPACE = "history"
TOP_K = 10
MODES = ("keyword", "semantic", "hybrid")
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
OLD_AGE = timedelta(days=730)
SAMPLE = 20  # old pull requests and old pushes searched for by their own words
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


@dataclass
class Imported:
    """What the history yielded: PR number -> observation ids and facts, old pushes' subjects."""

    prs: dict[int, dict[str, Any]] = field(default_factory=dict)
    pushes: list[dict[str, Any]] = field(default_factory=list)
    events: int = 0


def imported(history: GitHistory, service: Service) -> Imported:
    """Import the history into ``WORKSPACE`` with progress, as it streams; what the evaluation
    asks about."""
    from tqdm import tqdm

    from neural_memory.history.sink import EmbeddedSink, run_import

    total = history.prepare()
    for note in history.notes:
        print(f"note: {note}", file=sys.stderr)
    for warning in history.warnings:  # the numbers below are without what it could not read
        print(f"warning: {warning}", file=sys.stderr)
    facts = Imported()
    slug = history.repo.replace("/", ".")

    def noted() -> Iterator[tuple[str, dict[str, Any]]]:
        for origin, event in history.events():
            facts.events += 1
            detail = event["detail"]
            if event["detail-type"] == "pull_request":
                pr = detail["pull_request"]
                facts.prs[int(pr["number"])] = {
                    "ids": {f"github-pr-{slug}-{pr['number']}-pull_request_merged"},
                    "title": pr["title"],
                    "at": pr["merged_at"],
                    "created": pr.get("created_at"),
                    "sha": pr["merge_commit_sha"],
                }
            else:
                head = detail["head_commit"]
                push_id = f"github-push-{slug}-{detail['after'][:12]}"
                subject = head["message"].split("\n", 1)[0]
                facts.pushes.append({"id": push_id, "subject": subject, "at": head["timestamp"]})
            yield origin, event

    sink = EmbeddedSink(service, WORKSPACE)
    with tqdm(total=total, unit="event", desc="importing", file=sys.stderr) as bar:
        report = run_import(noted(), sink, progress=bar.update)
    if report.failures:
        first = report.failures[0]
        raise ValueError(f"{len(report.failures)} events failed to import, first {first.origin}: {first.reason}")
    push_ids = {push["id"] for push in facts.pushes}
    for pr in facts.prs.values():  # the push of its merge commit answers for it too
        merge_push = f"github-push-{slug}-{pr['sha'][:12]}"
        if merge_push in push_ids:
            pr["ids"].add(merge_push)
    return facts


def _ranked(service: Service, query: str, mode: str) -> list[set[str]]:
    from neural_memory.models import SearchRequest

    body = {"query": query, "topK": TOP_K, "mode": mode, "llmFilter": False}
    results = service.search(WORKSPACE, SearchRequest.model_validate(body), "eval-history").results
    return [{r.id, *r.duplicates} for r in results]


def _rank_of(ranked: list[set[str]], relevant: set[str]) -> int | None:
    return next((n for n, ids in enumerate(ranked, 1) if ids & relevant), None)


def _cited(entry: ChangelogEntry, facts: Imported) -> list[int]:
    """The PRs ``entry`` cites that the history holds, merged by the end of its release year: an
    older number is another tracker's (werkzeug's 2008 changelog cites its Trac tickets, whose
    numbers GitHub's pull requests took again in 2013)."""
    held = [n for n in entry.prs if n in facts.prs]
    if entry.released is None:
        return held
    return [n for n in held if _merged_year(facts.prs[n]) <= entry.released]


def _merged_year(pr: dict[str, Any]) -> int:
    """The year a PR was merged: its merge commit's, by the earlier of its author's and its
    committer's dates (a rewritten history's commits carry the rewrite's as the committer's)."""
    return min(int(str(pr[key])[:4]) for key in ("at", "created") if pr.get(key))


def changes(service: Service, facts: Imported, entries: list[ChangelogEntry]) -> dict[str, Any]:
    """recall@10 and MRR@10 of the changelog entries whose cited PRs the history holds, per mode."""
    from tqdm import tqdm

    queries = [(e.text, set().union(*(facts.prs[n]["ids"] for n in _cited(e, facts)))) for e in entries]
    queries = [(text, relevant) for text, relevant in queries if relevant]
    later = sum(1 for e in entries if any(n in facts.prs for n in e.prs) and not _cited(e, facts))
    scores: dict[str, Any] = {"queries": len(queries), "entries": len(entries), "citingLaterPrs": later}
    for mode in MODES:
        ranks = [
            _rank_of(_ranked(service, text, mode), relevant)
            for text, relevant in tqdm(queries, unit="q", desc=f"changelog ({mode})", file=sys.stderr)
        ]
        found = [rank for rank in ranks if rank is not None]
        scores[mode] = {
            "recall@10": round(len(found) / max(len(ranks), 1), 4),
            "mrr@10": round(sum(1 / rank for rank in found) / max(len(ranks), 1), 4),
        }
    return scores


def remembered(service: Service, facts: Imported, now: datetime, seed: int = 7) -> dict[str, Any]:
    """Old PRs found by their title, old pushes by their commit's subject (default search), and
    the old PRs whose lineage answers."""
    from neural_memory.errors import NotFound

    cutoff = now - OLD_AGE
    rng = random.Random(seed)
    # A title or subject names one change only if it occurs once and says something (four words):
    # "Fix typo" or "[pre-commit.ci] pre-commit autoupdate" fifty times over names none.
    titles: dict[str, int] = {}
    for pr in facts.prs.values():
        titles[pr["title"]] = titles.get(pr["title"], 0) + 1
    old_prs = [
        (n, pr)
        for n, pr in sorted(facts.prs.items())
        if datetime.fromisoformat(pr["at"]) <= cutoff and titles[pr["title"]] == 1 and len(pr["title"].split()) >= 4
    ]
    subjects: dict[str, int] = {}
    for push in facts.pushes:
        subjects[push["subject"]] = subjects.get(push["subject"], 0) + 1
    old_pushes = [
        push
        for push in facts.pushes
        if datetime.fromisoformat(push["at"]) <= cutoff
        and subjects[push["subject"]] == 1
        and len(push["subject"].split()) >= 4
        and not push["subject"].startswith("Merge ")
    ]
    prs = rng.sample(old_prs, min(SAMPLE, len(old_prs)))
    pushes = rng.sample(old_pushes, min(SAMPLE, len(old_pushes)))
    pr_found = [_rank_of(_ranked(service, pr["title"], "hybrid"), pr["ids"]) is not None for _, pr in prs]
    push_found = [_rank_of(_ranked(service, push["subject"], "hybrid"), {push["id"]}) is not None for push in pushes]
    lineage = 0
    for number, pr in prs:
        pr_id = next(i for i in pr["ids"] if i.endswith(f"-{number}-pull_request_merged"))
        try:
            service.lineage(WORKSPACE, pr_id, 10, "eval-history")
        except NotFound:
            continue
        lineage += 1
    return {
        "oldPrs": len(prs),
        "oldPrsFound": sum(pr_found),
        "oldPushes": len(pushes),
        "oldPushesFound": sum(push_found),
        "oldPrLineage": lineage,
    }


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


def topics(history: GitHistory, limit: int = TOPICS) -> list[Topic]:
    """The ``limit`` source files (no tests, docs or changelogs) touched by the most commits, each
    phrased by its name's words (``cache_control.py`` -> "cache control"; a generic name takes its
    folder's: ``_transports/default.py`` -> "transports default"), with its owners by commit count."""
    from neural_memory.history.git import Identities

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
        authors, recent = _people(by_path[path], newest)
        if not authors:
            continue
        own, own_recent = _people(under_path.get(path, []), newest)
        found.append(Topic(path, _phrase(path), _most(authors), _most(recent), _most(own), _most(own_recent)))
    return found


def _people(touched: list[tuple[str, datetime]], newest: datetime | None) -> tuple[list[str], list[str]]:
    """The authors of ``touched`` (bots left out), over the whole history and the last three years."""
    authors = [a for a, _ in touched if not a.endswith("[bot]")]
    recent = [a for a, at in touched if newest and at >= newest - RECENT and not a.endswith("[bot]")]
    return authors, recent


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


TRUTHS = ("owner", "recentOwner", "pathOwner", "pathRecentOwner")


def experts(service: Service, subjects: list[Topic]) -> dict[str, Any]:
    """hit@1 and hit@3 of ``/v1/experts`` against each truth, beside the baseline: the most frequent
    actors among the first 20 keyword results."""
    from neural_memory.models import ExpertsRequest, SearchRequest

    rows: list[dict[str, Any]] = []
    for topic in subjects:
        reply = service.experts(WORKSPACE, ExpertsRequest.model_validate({"query": topic.query}), "eval-history")
        ranked = [e.actor_name for e in reply.experts]
        body = {"query": topic.query, "topK": 20, "mode": "keyword", "llmFilter": False}
        results = service.search(WORKSPACE, SearchRequest.model_validate(body), "eval-history").results
        actors = [r.actor_name for r in results if r.actor_name and not r.actor_name.endswith("[bot]")]
        counts = Counter(actors)
        baseline = sorted(counts, key=lambda n: (-counts[n], n))
        rows.append(
            {"path": topic.path, "query": topic.query, "owner": list(topic.owners),
             "recentOwner": list(topic.recent_owners), "pathOwner": list(topic.path_owners),
             "pathRecentOwner": list(topic.path_recent_owners), "experts": ranked[:3], "baseline": baseline[:3]}
        )  # fmt: skip

    def hits(key: str, truth: str, k: int) -> float:
        scored = [row for row in rows if row[truth]]
        return round(sum(bool(set(row[truth]) & set(row[key][:k])) for row in scored) / max(len(scored), 1), 4)

    return {
        "topics": len(rows),
        "tied": {truth: sum(len(row[truth]) > 1 for row in rows) for truth in TRUTHS},
        **{
            f"{who}/{truth}": {"hit@1": hits(who, truth, 1), "hit@3": hits(who, truth, 3)}
            for who in ("experts", "baseline")
            for truth in TRUTHS
        },
        "rows": rows,
    }


CLAIMS = 300  # commit messages naming files, written as notes: the claims whose staleness is scored
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


def staleness(service: Service, history: GitHistory, seed: int = 11) -> dict[str, Any]:
    """Claims from the history's own words: commit messages naming files the repository has had,
    written as notes at their commit's time (``CLAIMS`` of them). The extractor's precision and
    recall against the plain reading (``named_paths``), and the marks' precision and recall against
    the truth: a later commit of the main line touched a path the claim names. Events marked: 0."""
    from neural_memory.engineering.text_refs import ANY_REPOSITORY, text_refs
    from neural_memory.models import ObservationIn

    graph = history.graph()
    touches = history.touches()
    renames = history.names()
    own = {ANY_REPOSITORY, history.repo}
    known = {p for paths in touches.values() for p in paths}
    by_name: dict[str, set[str]] = {}
    for known_path in known:
        by_name.setdefault(known_path.rsplit("/", 1)[-1], set()).add(known_path)
    main_line = sorted(
        ((datetime.fromisoformat(c.committed), c.sha) for c in history.commits()), key=lambda pair: pair[0]
    )
    claims = []
    for commit in graph.values():
        truth = named_paths(commit.message, known, by_name, history.repo)
        if truth:
            claims.append((commit, truth))
    claims.sort(key=lambda pair: pair[0].sha)
    claims = random.Random(seed).sample(claims, min(CLAIMS, len(claims)))
    extracted_right = extracted = truth_found = truth_total = 0
    for commit, truth in claims:
        names = {path for ref in text_refs(commit.message, None) for where, path in [ref.split(":", 1)] if where in own}
        extracted += len(names)
        extracted_right += sum(1 for n in names if named_paths(n, known, by_name, history.repo))
        truth_total += len(truth)
        truth_found += sum(1 for token in truth if token in names or token.removeprefix("./") in names)
    notes = [
        ObservationIn.model_validate(
            {
                "id": f"claim-{commit.sha[:12]}",
                "source": "manual",
                "observationType": "note",
                "occurredAt": commit.committed,
                "title": commit.subject[:200] or "claim",
                "content": commit.message,
                "actorName": "eval-history",
            }
        )
        for commit, _ in claims
    ]
    for start in range(0, len(notes), 64):
        service.index(WORKSPACE, notes[start : start + 64])
    marked = {
        r.id
        for start in range(0, len(notes), 100)
        for r in service.store.read(WORKSPACE, [n.id or "" for n in notes[start : start + 100]]).values()
        if r.possibly_stale
    }
    truly = set()
    for commit, truth in claims:
        at = datetime.fromisoformat(commit.committed)
        # A path named, and the names it took later: a rename does not end what the claim is about.
        paths = {later for path in set().union(*truth.values()) for later in renames.chain(path, renames.index_at(at))}
        if any(when > at and paths & set(touches.get(sha, ())) for when, sha in main_line):
            truly.add(f"claim-{commit.sha[:12]}")
    events_marked = _events_marked(service, history, [sha for _, sha in main_line])
    both = len(marked & truly)
    return {
        "claims": len(claims),
        "extractPrecision": round(extracted_right / max(extracted, 1), 4),
        "extractRecall": round(truth_found / max(truth_total, 1), 4),
        "stale": len(truly),
        "marked": len(marked),
        "precision": round(both / max(len(marked), 1), 4),
        "recall": round(both / max(len(truly), 1), 4),
        "eventsMarked": events_marked,
    }


def _events_marked(service: Service, history: GitHistory, shas: list[str]) -> int:
    """The pushes of the main line that carry a stale mark (only claims may: must be 0)."""
    slug = history.repo.replace("/", ".")
    ids = [f"github-push-{slug}-{sha[:12]}" for sha in shas]
    return sum(
        1
        for start in range(0, len(ids), 500)
        for record in service.store.read(WORKSPACE, ids[start : start + 500]).values()
        if record.possibly_stale
    )


def run(
    path: Path, repo: str | None, pr_tier: Tier | None, settings: Settings, changelog_path: str | None = None
) -> dict[str, Any]:
    """Import ``path``'s history into a temporary store and score it (changes against
    ``changelog_path`` when given, else the changelog ``find_changelog`` finds)."""
    from neural_memory.clock import utcnow
    from neural_memory.history.git import GitHistory, GitHistoryError
    from neural_memory.local.eval_service import evaluation_service

    history = GitHistory(path, repo=repo)
    if pr_tier is not None:
        policy = {WORKSPACE: {"pull_request_merged": pr_tier}}
        settings = settings.model_copy(update={"workspace_tier_policy": policy})
    now = utcnow()
    changelog = find_changelog(history, changelog_path)
    if changelog_path and changelog is None:
        raise GitHistoryError(f"{changelog_path!r} is not a file of {history.branch}'s newest tree")
    entries = changelog_entries(changelog[1]) if changelog else []
    with evaluation_service(settings, clock=lambda: now) as service:
        facts = imported(history, service)
        result: dict[str, Any] = {
            "repo": history.repo,
            "branch": history.branch,
            "events": facts.events,
            "mergedPrs": len(facts.prs),
            "prTier": settings.tiers_of(WORKSPACE).get("pull_request_merged"),
            "changelog": changelog[0] if changelog else None,
            "changes": changes(service, facts, entries),
            "remembered": remembered(service, facts, now),
            "experts": experts(service, topics(history)),
            "staleness": staleness(service, history),  # last: it writes claims into the workspace
        }
    return result


def summary(result: dict[str, Any]) -> list[str]:
    """The report's lines."""
    found = result["remembered"]
    lines = [
        f"{result['repo']} ({result['branch']}): {result['events']} events, {result['mergedPrs']} merged PRs "
        f"(tier {result['prTier']})",
        f"  changes ({result['changelog']}: {result['changes']['queries']} entries citing a PR the history holds; "
        f"{result['changes']['citingLaterPrs']} citing only PRs merged after their release, not counted)",
    ]
    for mode in MODES:
        scores = result["changes"][mode]
        lines.append(f"    {mode:<9} recall@10 {scores['recall@10']:.4f}  MRR@10 {scores['mrr@10']:.4f}")
    lines.append(
        f"  remembered (2+ years old, default search): PRs by title {found['oldPrsFound']}/{found['oldPrs']}, "
        f"pushes by commit subject {found['oldPushesFound']}/{found['oldPushes']}, "
        f"PR lineage {found['oldPrLineage']}/{found['oldPrs']}"
    )
    scores = result["experts"]
    lines.append(f"  who knows ({scores['topics']} most-touched source files, phrased by their names)")
    for truth, label in (
        ("owner", "top author, whole history"),
        ("recentOwner", "top author, last 3 years"),
        ("pathOwner", "the same, this path only"),
        ("pathRecentOwner", "  and its last 3 years"),
    ):
        product, baseline = scores[f"experts/{truth}"], scores[f"baseline/{truth}"]
        tied = f"   ({scores['tied'][truth]} tied: any top author counts)" if scores["tied"][truth] else ""
        lines.append(
            f"    {label:<27} experts hit@1 {product['hit@1']:.2f} hit@3 {product['hit@3']:.2f}   "
            f"keyword baseline hit@1 {baseline['hit@1']:.2f} hit@3 {baseline['hit@3']:.2f}{tied}"
        )
    stale = result["staleness"]
    lines.append(
        f"  staleness ({stale['claims']} commit messages naming files, as notes): names read precision "
        f"{stale['extractPrecision']:.2f} recall {stale['extractRecall']:.2f}; marks precision "
        f"{stale['precision']:.2f} recall {stale['recall']:.2f} ({stale['marked']} marked, {stale['stale']} stale); "
        "events marked "
        f"{stale['eventsMarked']}"
    )
    return lines
