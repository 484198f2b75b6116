"""Synthetic engineering observations for benchmarks: reproducible from a seed."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from neural_memory.models import ObservationIn

if TYPE_CHECKING:
    from collections.abc import Iterator

COMPONENTS = [
    "auth",
    "billing",
    "console",
    "api gateway",
    "search",
    "ingest worker",
    "session store",
    "payments",
    "webhooks",
    "rate limiter",
    "dashboard",
    "edge middleware",
    "postgres",
    "redis cache",
    "build pipeline",
    "feature flags",
    "notifications",
    "export job",
    "scheduler",
    "cdn",
    "oauth callback",
    "audit log",
    "admin panel",
    "sdk",
]
VERBS = [
    "fix",
    "refactor",
    "add",
    "remove",
    "migrate",
    "speed up",
    "document",
    "harden",
    "revert",
    "upgrade",
    "retry",
    "cache",
    "validate",
    "paginate",
    "instrument",
    "split",
    "rename",
    "deprecate",
]
DETAILS = [
    "timeout on cold start",
    "redirect loop after login",
    "missing environment variable",
    "null pointer in handler",
    "slow query on large tenants",
    "race between refresh and redirect",
    "memory leak in worker",
    "flaky end-to-end test",
    "wrong currency rounding",
    "duplicate webhook delivery",
    "expired certificate",
    "429 from upstream provider",
    "schema drift after migration",
    "stale cache after deploy",
    "OOM during build",
    "retry storm on outage",
]
WORDS = (
    "the a we because after before when during deploy build release rollback incident latency error "
    "failure request response queue retry timeout token session cache index query tenant customer user "
    "migration schema config environment variable production preview staging branch commit review merge "
    "test coverage alert dashboard metric log trace span p95 budget throughput regression fix cause "
    "impact mitigation follow-up owner"
).split()
SOURCES = {
    "github": ["push", "pull_request_opened", "pull_request_merged", "issue_opened", "issue_closed"],
    "vercel": ["deployment_error", "deployment_succeeded"],
    "manual": ["note", "decision"],
    "agent": ["conversation_turn"],
}
ACTORS = [f"dev{i:02d}" for i in range(40)] + ["octocat", "hubot", "dependabot[bot]"]
QUERIES = [
    "why did the deploy fail",
    "redirect loop after login",
    "slow query on large tenants",
    "who changed the rate limiter",
    "missing environment variable in production",
    "memory leak in the ingest worker",
    "flaky end-to-end test on CI",
    "duplicate webhook delivery",
    "rollback of the billing migration",
    "stale cache after deploy",
    "timeout on cold start in the api gateway",
    "expired certificate on the cdn",
    "how do we paginate exports",
    "retry storm during the outage",
    "decision about feature flags",
    "oauth callback error for customers",
]


def observations(count: int, seed: int, now: datetime) -> list[ObservationIn]:
    """``count`` observations spread over the 6 days before ``now`` (so collaborative ones are live)."""
    return list(iter_observations(count, seed, now))


def iter_observations(count: int, seed: int, now: datetime) -> Iterator[ObservationIn]:
    """``observations()`` one at a time (a million do not fit in memory as objects)."""
    rng = random.Random(seed)
    for i in range(count):
        source = rng.choice(list(SOURCES))
        kind = rng.choice(SOURCES[source])
        component, verb, detail = rng.choice(COMPONENTS), rng.choice(VERBS), rng.choice(DETAILS)
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60)))
        yield ObservationIn.model_validate(
            {
                "id": f"syn-{i}",
                "source": source,
                "observationType": kind,
                "actorName": rng.choice(ACTORS),
                "occurredAt": now - timedelta(seconds=rng.randint(0, 6 * 86400)),
                "title": f"{verb} {component}: {detail}",
                "content": f"{detail} in {component}. {body}",
                "sessionId": f"sess-{rng.randint(0, 500)}" if source == "agent" else None,
            }
        )


def search_bodies(count: int, seed: int, now: datetime) -> list[dict[str, object]]:
    """Hybrid search bodies, each with a filter (source, actor, tier or a date range, alone or combined)."""
    rng = random.Random(seed)
    bodies: list[dict[str, object]] = []
    for _ in range(count):
        filters: dict[str, object] = {}
        for _ in range(rng.randint(1, 2)):
            kind = rng.choice(["source", "actor", "tier", "date"])
            if kind == "source":
                filters["sourceTypes"] = rng.sample(list(SOURCES), rng.randint(1, 2))
            elif kind == "actor":
                filters["actorNames"] = rng.sample(ACTORS, rng.randint(1, 5))
            elif kind == "tier":
                filters["tiers"] = rng.sample(["A", "C", "E"], rng.randint(1, 2))
            else:
                filters["dateRange"] = {"start": (now - timedelta(days=rng.randint(1, 5))).isoformat()}
        bodies.append({"query": rng.choice(QUERIES), "topK": 10, "mode": "hybrid", "filters": filters})
    return bodies
