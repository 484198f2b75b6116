"""What a feature moved above the store port costs on the embedded store (issue 36): each read
through ``Store.find`` against the dedicated statement the store ran before (kept here verbatim,
the store no longer has it), on the same file, in interleaved rounds, after checking both answer
the same.

    python -m bench.find_paths [--turns 50000] [--decisions 4000] [--linked 20000] [--rounds 5]

- previous turn: ``ingest/turn_context.previous_in_session`` (a chat turn's write asks it) over
  ``--turns`` records, half of them chat turns in 200 sessions; 2,000 asks at random moments.
- superseders: ``ingest/supersession.superseders`` (each write naming ``supersedes`` walks it)
  over ``--decisions`` decisions, each fourth superseding the one four before it; asks of one id
  and of ten.
- sharing metadata: ``engineering/lineage.sharing_metadata`` (a lineage read asks it) over
  ``--linked`` records of one repository (its term in every row), each naming a pull request
  number (ten records each) and a commit (five each); asks of the two keys a lineage holds.
- recurrences: ``ingest/lifecycle.recurrences`` (an ingest batch of E observations asks it, with
  ``NM_EMBED_RECURRING_AFTER`` set) over ``--executions`` E records, each content occurring ten
  times, none embedded; asks of a batch's 100 keys, every one recurring (the worst case: a count
  by key, then a find per key), against the two statements the store ran for all keys at once.

Printed: microseconds per call, the median of the rounds, each side.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")  # EMF lines would flood the terminal

from neural_memory.clock import to_ms
from neural_memory.domain.filters import metadata_term
from neural_memory.engineering.lineage import sharing_metadata
from neural_memory.ingest.lifecycle import recurrences
from neural_memory.ingest.supersession import superseders
from neural_memory.ingest.turn_context import previous_in_session
from neural_memory.models import ObservationIn
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.rows import RECORD_COLUMNS, record_of
from neural_memory.stores.sqlite.store import SqliteStore

from bench.log_sink import discard_log_output

if TYPE_CHECKING:
    from collections.abc import Callable

NOW = datetime(2026, 11, 1, tzinfo=UTC)
SESSIONS = 200
# The statements the store ran before the features moved (issue 36).
OLD_PREVIOUS_TURN = (
    f"SELECT {RECORD_COLUMNS} FROM observations o INDEXED BY observations_session "
    "WHERE o.workspace_id = ? AND o.session_id = ? AND o.occurred_at < ? ORDER BY o.occurred_at DESC LIMIT 1"
)
OLD_SUPERSEDERS = (
    "SELECT m.value, o.id FROM observations o INDEXED BY observations_superseding, json_each(o.supersedes) m "
    "WHERE o.workspace_id = ? AND o.supersedes IS NOT NULL AND m.value IN ({}) ORDER BY o.occurred_at DESC, o.id DESC"
)

OLD_RECURRENCE_COUNTS = (
    "SELECT recurrence_key, count(*) FROM observations INDEXED BY observations_recurrence "
    "WHERE workspace_id = ? AND recurrence_key IN ({}) GROUP BY recurrence_key"
)
OLD_UNEMBEDDED = (
    "SELECT recurrence_key, id FROM (SELECT recurrence_key, id, row_number() OVER "
    "(PARTITION BY recurrence_key ORDER BY occurred_at, id) AS n FROM observations "
    "INDEXED BY observations_recurrence WHERE workspace_id = ? AND recurrence_key IN ({}) "
    "AND embedded_at IS NULL) WHERE n <= ?"
)
OLD_SHARING = (  # one read per group, merged in Python (``old_sharing``)
    "SELECT {columns} FROM metadata_terms t0{joins} CROSS JOIN observations o "
    "ON o.pk = t0.obs_pk WHERE t0.term = ? AND o.workspace_id = ? "
    "AND (o.expires_at IS NULL OR o.expires_at > ?) ORDER BY o.occurred_at, o.id LIMIT ?"
)


def _store(folder: Path, observations: list[ObservationIn]) -> SqliteStore:
    settings = Settings(data_dir=folder)
    store = SqliteStore(settings.sqlite_path, synchronous="normal")
    service = Service(store, None, settings, clock=lambda: NOW)
    for start in range(0, len(observations), 1000):
        service.index("bench", observations[start : start + 1000])
    return store


def _turns(count: int, rng: random.Random) -> list[ObservationIn]:
    made = []
    for i in range(count):
        session = f"s{rng.randrange(SESSIONS)}" if i % 2 else None  # half notes, half chat turns
        fields: dict[str, Any] = {
            "id": f"o{i}",
            "source": "agent",
            "observationType": "message" if session else "note",
            "occurredAt": (NOW - timedelta(minutes=count - i)).isoformat(),
            "title": f"turn {i}",
            "content": f"words of turn {i}",
            "tier": "A",
        }
        if session:
            fields["sessionId"] = session
        made.append(ObservationIn.model_validate(fields))
    return made


def _decisions(count: int) -> list[ObservationIn]:
    made = []
    for i in range(count):
        fields: dict[str, Any] = {
            "id": f"o{i}",
            "source": "manual",
            "observationType": "decision",
            "tier": "A",
            "occurredAt": (NOW - timedelta(minutes=count - i)).isoformat(),
            "title": f"decision {i}",
            "content": f"words of decision {i} " * 20,
        }
        if i % 4 == 0 and i:
            fields["supersedes"] = [f"o{i - 4}"]
        made.append(ObservationIn.model_validate(fields))
    return made


def _linked(count: int) -> list[ObservationIn]:
    return [
        ObservationIn.model_validate(
            {
                "id": f"o{i}",
                "source": "github",
                "observationType": "pull_request_merged",
                "tier": "A",
                "occurredAt": (NOW - timedelta(minutes=count - i)).isoformat(),
                "title": f"change {i}",
                "content": f"words of change {i}",
                "metadata": {"repo": "acme/console", "number": i // 10, "commitSha": f"{i // 5:040x}"},
            }
        )
        for i in range(count)
    ]


def _executions(count: int) -> list[ObservationIn]:
    return [
        ObservationIn.model_validate(
            {
                "id": f"o{i}",
                "source": "vercel",
                "observationType": "deployment_error",
                "tier": "E",
                "occurredAt": (NOW - timedelta(minutes=count - i)).isoformat(),
                "title": f"deploy {i % (count // 10)} failed",
                "content": f"Deployment {i % (count // 10)} failed: build step exited 1.",
            }
        )
        for i in range(count)
    ]


def _timed(sides: dict[str, Callable[[], object]], calls: int, rounds: int) -> dict[str, float]:
    """Microseconds per call of each side, the median of ``rounds`` interleaved rounds."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    for round_ in range(rounds):
        for name in sorted(sides, reverse=bool(round_ % 2)):  # who goes first alternates
            start = time.perf_counter()
            sides[name]()
            times[name].append((time.perf_counter() - start) / calls * 1e6)
    return {name: statistics.median(values) for name, values in times.items()}


def _compare(
    label: str, old: Callable[[Any], object], new: Callable[[Any], object], asks: list[Any], rounds: int
) -> None:
    """Check both sides answer every ask alike, then print each one's time per call."""
    assert all(old(ask) == new(ask) for ask in asks), label
    times = _timed(
        {"dedicated statement": lambda: [old(ask) for ask in asks], "over find": lambda: [new(ask) for ask in asks]},
        len(asks),
        rounds,
    )
    print(f"{label}: " + ", ".join(f"{side} {value:.1f} us" for side, value in times.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=50_000)
    parser.add_argument("--decisions", type=int, default=4_000)
    parser.add_argument("--linked", type=int, default=20_000)
    parser.add_argument("--executions", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    discard_log_output()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        store = _store(Path(tmp) / "turns", _turns(args.turns, rng))
        conn = store._reader().conn
        moments = [NOW - timedelta(minutes=rng.randrange(args.turns)) for _ in range(2000)]
        asks = [(f"s{rng.randrange(SESSIONS)}", moment) for moment in moments]

        def old_turn(ask: tuple[str, datetime]) -> str | None:
            session, before = ask
            row = conn.execute(OLD_PREVIOUS_TURN, ("bench", session, to_ms(before))).fetchone()
            return None if row is None else record_of(row).id

        def new_turn(ask: tuple[str, datetime]) -> str | None:
            session, before = ask
            found = previous_in_session(store, "bench", session, before)
            return None if found is None else found.id

        _compare(f"previous turn ({args.turns} records)", old_turn, new_turn, asks, args.rounds)
        store.close()

        store = _store(Path(tmp) / "decisions", _decisions(args.decisions))
        conn = store._reader().conn
        step = max(args.decisions // 200, 1)
        wanted = [[f"o{i}"] for i in range(0, args.decisions, step)]
        wanted += [[f"o{i}" for i in range(j, j + 40, 4)] for j in range(0, args.decisions - 40, step * 4)]

        def old_superseders(ids: list[str]) -> dict[str, list[str]]:
            found: dict[str, list[str]] = {}
            for target, by in conn.execute(OLD_SUPERSEDERS.format(", ".join("?" * len(ids))), ("bench", *ids)):
                found.setdefault(str(target), []).append(str(by))
            return found

        _compare(
            f"superseders ({args.decisions} decisions)",
            old_superseders,
            lambda ids: superseders(store, "bench", ids),
            wanted,
            args.rounds,
        )
        store.close()

        store = _store(Path(tmp) / "linked", _linked(args.linked))
        conn = store._reader().conn
        keys = [
            [(("number", n), ("repo", "acme/console")), (("commitSha", f"{n * 2 + 1:040x}"),)]
            for n in range(0, args.linked // 10, max(args.linked // 2000, 1))
        ]

        def old_sharing(groups: list[tuple[tuple[str, Any], ...]]) -> list[str]:
            found: dict[str, tuple[datetime, str]] = {}
            for group in groups:
                terms = [metadata_term(key, value) for key, value in group]
                joins = "".join(
                    f" CROSS JOIN metadata_terms t{n} ON t{n}.obs_pk = t0.obs_pk AND t{n}.term = ?"
                    for n in range(1, len(terms))
                )
                sql = OLD_SHARING.format(columns=RECORD_COLUMNS, joins=joins)
                for row in conn.execute(sql, [*terms[1:], terms[0], "bench", to_ms(NOW), 22]):
                    record = record_of(row)
                    found[record.id] = (record.occurred_at, record.id)
            return [i for i, _ in sorted(found.items(), key=lambda item: item[1])][:22]

        def new_sharing(groups: list[tuple[tuple[str, Any], ...]]) -> list[str]:
            return [r.id for r in sharing_metadata(store, "bench", groups, NOW, 22)]

        _compare(f"sharing metadata ({args.linked} records)", old_sharing, new_sharing, keys, args.rounds)
        store.close()

        store = _store(Path(tmp) / "executions", _executions(args.executions))
        conn = store._reader().conn
        every = sorted({str(key) for (key,) in conn.execute("SELECT DISTINCT recurrence_key FROM observations")})
        batches = [every[start : start + 100] for start in range(0, min(len(every), 2000), 100)]

        def old_recurrences(wanted: list[str]) -> dict[str, tuple[int, list[str]]]:
            marks = ", ".join("?" * len(wanted))
            found = {
                str(key): (int(count), list[str]())
                for key, count in conn.execute(OLD_RECURRENCE_COUNTS.format(marks), ("bench", *wanted))
            }
            for key, observation_id in conn.execute(OLD_UNEMBEDDED.format(marks), ("bench", *wanted, 100)):
                found[str(key)][1].append(str(observation_id))
            return found

        def new_recurrences(wanted: list[str]) -> dict[str, tuple[int, list[str]]]:
            return {key: (r.count, r.unembedded) for key, r in recurrences(store, "bench", wanted, 100).items()}

        _compare(
            f"recurrences of 100 keys ({args.executions} records)",
            old_recurrences,
            new_recurrences,
            batches,
            args.rounds,
        )
        store.close()


if __name__ == "__main__":
    main()
