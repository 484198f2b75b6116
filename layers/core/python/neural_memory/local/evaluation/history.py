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
- **Who knows** and **staleness**: ``/v1/experts`` against each source file's owners, and stale
  marks on the claims commit messages make.

The truth itself (changelog entries, topics and their owners, the paths a message names) is read
from the clone by ``local/evaluation/history_truth.py``, the history imported by
``local/evaluation/imported_history.py``; this module scores.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from neural_memory.local.evaluation.history_truth import changelog_entries, find_changelog, named_paths, topics
from neural_memory.local.evaluation.imported_history import WORKSPACE, imported

if TYPE_CHECKING:
    from pathlib import Path

    from neural_memory.local.evaluation.history_truth import ChangelogEntry, Topic
    from neural_memory.local.evaluation.imported_history import Imported
    from neural_memory.local.history.git import GitHistory
    from neural_memory.models import Tier
    from neural_memory.service import Service
    from neural_memory.settings import Settings

TOP_K = 10
MODES = ("keyword", "semantic", "hybrid")
OLD_AGE = timedelta(days=730)
SAMPLE = 20  # old pull requests and old pushes searched for by their own words


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


def staleness(service: Service, history: GitHistory, seed: int = 11) -> dict[str, Any]:
    """Claims from the history's own words: commit messages naming files the repository has had,
    written as notes at their commit's time (``CLAIMS`` of them). The extractor's precision and
    recall against the plain reading (``named_paths``), and the marks' precision and recall against
    the truth: a later commit of the main line touched a path the claim names. Events marked: 0."""
    from neural_memory.domain.text_refs import ANY_REPOSITORY, text_refs
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
    from neural_memory.local.evaluation.temporary_service import evaluation_service
    from neural_memory.local.history.git import GitHistory, GitHistoryError

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
