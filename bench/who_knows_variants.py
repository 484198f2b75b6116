"""Who knows, and rankings it could have had: ``/v1/experts`` beside variants of its aggregation,
against the truths ``eval-history`` takes from git.

    python -m bench.who_knows_variants PATH [PATH ...] [--repo owner/name] [--data-dir DIR]

Each clone's history is imported as ``eval-history`` imports it (a temporary store, the embedding
cache of ``--data-dir``), its topics are ``eval-history``'s (the 25 most-touched source files), and
each topic's query is ranked by:

- ``experts``: ``/v1/experts`` as it is (the keyword search's best 50, aggregated);
- ``pool 100``: the search's best 100 aggregated;
- ``best credit``: the 50 of the best 100 whose credit (relevance x type weight x age factor) is
  highest, so the pool is cut by what counts rather than by relevance alone;
- ``weekly``: an actor's credits in one calendar week count once (their best): a sweep of similar
  pull requests in a few days is one piece of evidence;
- ``one per change``: a merged pull request and the push of its merge commit (the same
  ``commitSha``) count once, their best, and the pool holds 50 distinct changes;
- ``asked for 3 y``: ``/v1/experts`` asked the last-three-years question itself
  (``filters.dateRange`` from three years before the newest observation): for those truths only;
- ``asked lately``: ``/v1/experts`` asked "who knows <topic> lately?" as a person asks it (the
  question reader keeps it to the history's last year, or the whole history when nobody worked on
  it then), against a fifth truth: the top author of the history's last year (topics nobody
  touched in that year have none and do not count).

Printed: hit@1/hit@3 of each against each truth (through renames and this path only; the whole
history and its last three years; through renames, its last year). A variant is only worth
taking if it loses on no history.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

from neural_memory.clock import utcnow
from neural_memory.engineering import experts as ranking
from neural_memory.local.evaluation import imported_history as history_eval
from neural_memory.local.evaluation.history_truth import RECENT, topics
from neural_memory.local.evaluation.temporary_service import evaluation_service
from neural_memory.local.history.git import GitHistory
from neural_memory.models import ExpertsRequest, SearchRequest
from neural_memory.settings import Settings
from neural_memory.use_cases.finding_experts import LATELY

from bench.log_sink import discard_log_output

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from datetime import datetime

    from neural_memory.models import ObservationRecord, SearchResult
    from neural_memory.service import Service

TRUTHS = {
    "owner": "through renames, whole",
    "recentOwner": "through renames, last 3 y",
    "pathOwner": "this path only, whole",
    "pathRecentOwner": "this path only, last 3 y",
    "latelyOwner": "through renames, last year",
}
TOP = 3


def _pool(service: Service, query: str, size: int) -> list[SearchResult]:
    body = {
        "query": query,
        "topK": size,
        "mode": "keyword",
        "rerank": "fast",
        "llmFilter": False,
        "collapseDuplicates": False,
    }
    return service.search(history_eval.WORKSPACE, SearchRequest.model_validate(body), "bench").results


def _names(results: Sequence[SearchResult], records: Mapping[str, ObservationRecord], clock: datetime) -> list[str]:
    return [e.actor_name for e in ranking.rank_experts(results, records, clock, TOP, 1)[0]]


def _credit(result: SearchResult, clock: datetime) -> float:
    relevance = result.scores.fused or 0.0
    return relevance * ranking.weight(result.observation_type) * ranking.age_factor(result.occurred_at, clock)


def _weekly(results: Sequence[SearchResult], records: Mapping[str, ObservationRecord], clock: datetime) -> list[str]:
    everyone, _ = ranking.rank_experts(results, records, clock, 1_000, 1_000)
    scored = []
    for expert in everyone:
        weeks: dict[tuple[int, int], float] = {}
        for evidence in expert.evidence:
            week = evidence.occurred_at.isocalendar()
            key = (week.year, week.week)
            weeks[key] = max(weeks.get(key, 0.0), evidence.contribution)
        best = sorted(weeks.values(), reverse=True)
        scored.append((sum(c / math.sqrt(k) for k, c in enumerate(best, 1)), expert.actor_name))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [name for _, name in scored[:TOP]]


def _one_per_change(
    results: Sequence[SearchResult], records: Mapping[str, ObservationRecord], limit: int
) -> list[SearchResult]:
    best: dict[str, SearchResult] = {}
    for result in results:
        record = records.get(result.id)
        sha = record.metadata.get("commitSha") if record is not None else None
        key = sha if isinstance(sha, str) and sha else result.id
        if key not in best:
            if len(best) < limit:
                best[key] = result
        elif (result.scores.fused or 0.0) * ranking.weight(result.observation_type) > (
            best[key].scores.fused or 0.0
        ) * ranking.weight(best[key].observation_type):
            best[key] = result
    return list(best.values())


def _asked(service: Service, query: str, filters: dict[str, Any] | None = None) -> list[str]:
    body = {"query": query, "filters": filters}
    reply = service.experts(history_eval.WORKSPACE, ExpertsRequest.model_validate(body), "bench")
    return [e.actor_name for e in reply.experts[:TOP]]


def variants(service: Service, query: str, clock: datetime) -> dict[str, list[str]]:
    """Each variant's first ``TOP`` actors for ``query``."""
    window = {"dateRange": {"start": (clock - RECENT).isoformat()}}
    fifty, hundred = _pool(service, query, ranking.POOL), _pool(service, query, 2 * ranking.POOL)
    records = service.store.read(history_eval.WORKSPACE, list({r.id for r in [*fifty, *hundred]}))
    by_credit = sorted(hundred, key=lambda r: -_credit(r, clock))[: ranking.POOL]
    ranked: dict[str, Callable[[], list[str]]] = {
        "experts": lambda: _asked(service, query),
        "pool 100": lambda: _names(hundred, records, clock),
        "best credit": lambda: _names(by_credit, records, clock),
        "weekly": lambda: _weekly(fifty, records, clock),
        "one per change": lambda: _names(_one_per_change(hundred, records, ranking.POOL), records, clock),
        "asked for 3 y": lambda: _asked(service, query, window),
        "asked lately": lambda: _asked(service, f"who knows {query} lately?"),
    }
    return {name: rank() for name, rank in ranked.items()}


def run(path: Path, repo: str | None, settings: Settings) -> list[dict[str, Any]]:
    """One row per topic: its truths and each variant's ranking."""
    history = GitHistory(path, repo=repo)
    now = utcnow()
    rows: list[dict[str, Any]] = []
    with evaluation_service(settings, clock=lambda: now) as service:
        history_eval.imported(history, service)
        clock = min(ranking.newest_observation(service.store, history_eval.WORKSPACE) or now, now)
        last_year = {topic.path: topic.recent_owners for topic in topics(history, recent=LATELY)}
        for topic in topics(history):
            truths = {
                "owner": topic.owners,
                "recentOwner": topic.recent_owners,
                "pathOwner": topic.path_owners,
                "pathRecentOwner": topic.path_recent_owners,
                "latelyOwner": last_year.get(topic.path, ()),
            }
            rows.append({"path": topic.path, **truths, "ranked": variants(service, topic.query, clock)})
    return rows


def hits(rows: list[dict[str, Any]], variant: str, truth: str, k: int) -> float:
    """The share of topics with a truth whose owner is among the variant's first ``k``."""
    scored = [row for row in rows if row[truth]]
    found = sum(bool(set(row[truth]) & set(row["ranked"][variant][:k])) for row in scored)
    return found / max(len(scored), 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="clones to import")
    parser.add_argument("--repo", help="owner/name, when one clone's origin does not say (one path only)")
    parser.add_argument("--data-dir", type=Path, default=Path(".neural-memory"), help="its embedding cache is used")
    args = parser.parse_args(argv)
    discard_log_output()
    settings = Settings(data_dir=args.data_dir)
    print("history, variant: hit@1/hit@3 " + "; ".join(TRUTHS.values()))
    for path in args.paths:
        rows = run(path, args.repo if len(args.paths) == 1 else None, settings)
        for variant in rows[0]["ranked"] if rows else []:
            cells = "; ".join(f"{hits(rows, variant, t, 1):.2f}/{hits(rows, variant, t, TOP):.2f}" for t in TRUTHS)
            print(f"{path.name}, {variant}: {cells} ({len(rows)} topics)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
