"""The embedded store at a million observations: search latency, restart and resident memory.

    python -m bench.scale [--size 1000000] [--searches 300] [--data-dir DIR]

Builds (or reuses, in ``--data-dir``) a store of ``--size`` synthetic observations in one
workspace, vectors from the real model as in ``bench.search_latency`` (a pool of embedded texts
plus noise), streamed in batches so the builder itself stays small. Then, each in a fresh
process as a server would be:

1. the first search of a store never searched (builds the in-memory index and saves it);
2. a restart: the first search of a new process (loads the saved index), then ``--searches``
   hybrid searches with a filter — ``Service.search`` end to end, query embedding included —
   printing p50/p95, the stage breakdown and the process's peak resident memory;
3. recall of the vector retriever against exact brute force over the SQLite vectors, for the same
   queries and filters (the index is exact below ``COMPRESS_FROM`` vectors, approximate above).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

import numpy as np
from neural_memory.clock import from_iso, to_iso, utcnow
from neural_memory.domain.chunking import embedding_text
from neural_memory.domain.tiers import DEFAULT_POLICY, is_embedded
from neural_memory.ingest.prepare import prepare
from neural_memory.models import SearchRequest
from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore
from tqdm import tqdm

from bench.synthetic import iter_observations, search_bodies

BATCH = 5000


def build(size: int, data_dir: Path, pool: int, now: Any) -> None:
    """Write ``size`` observations to the store in ``data_dir`` (pool vectors plus noise)."""
    embedder = OnnxLocalEmbedder()
    embedder.load()
    store = SqliteStore(Settings(data_dir=data_dir).sqlite_path)
    rng = np.random.default_rng(size)
    vectors: dict[str, np.ndarray[Any, Any]] = {}
    batch: list[Any] = []
    with tqdm(total=size, desc=f"building {size}", unit="obs", file=sys.stderr) as progress:
        for observation in iter_observations(size, seed=size, now=now):
            batch.append(prepare(observation, now=now, policy=DEFAULT_POLICY, ttl_days=7))
            if len(batch) == BATCH:
                _write(store, embedder, batch, vectors, pool, rng)
                progress.update(len(batch))
                batch = []
        if batch:
            _write(store, embedder, batch, vectors, pool, rng)
            progress.update(len(batch))
    store.close()


def built_store(size: int, data_dir: Path, pool: int) -> Any:
    """Build the store in ``data_dir`` unless a finished one is there; returns its ``now``."""
    stamp = data_dir / "built-at"
    if stamp.exists():
        now = from_iso(stamp.read_text().strip())
        print(f"reusing the store in {data_dir} (built {to_iso(now)})", file=sys.stderr)
        return now
    now = utcnow()
    build(size, data_dir, pool, now)
    stamp.write_text(to_iso(now))
    return now


def _write(
    store: SqliteStore,
    embedder: OnnxLocalEmbedder,
    items: list[Any],
    vectors: dict[str, np.ndarray[Any, Any]],
    pool: int,
    rng: np.random.Generator,
) -> None:
    targets = [item for item in items if is_embedded(item.record.tier)]
    texts = [embedding_text(i.record.title, i.chunks[0].text) for i in targets]
    new = [t for t in dict.fromkeys(texts) if t not in vectors][: max(pool - len(vectors), 0)]
    for start in range(0, len(new), 256):
        chunk = new[start : start + 256]
        vectors.update(
            zip(chunk, (np.asarray(v, dtype=np.float32) for v in embedder.embed(chunk, "search_document")), strict=True)
        )
    keys = list(vectors)
    for item, text in zip(targets, texts, strict=True):
        base = vectors.get(text)
        if base is None:
            base = vectors[keys[rng.integers(len(keys))]]
        noisy = base + rng.normal(0, 0.02, base.shape).astype(np.float32)
        item.chunks[0].vector = (noisy / np.linalg.norm(noisy)).tolist()
        item.model_id = embedder.model_id
    store.write("bench", items)


def measure(data_dir: Path, searches: int, now: Any, label: str) -> dict[str, Any]:
    """In this (fresh) process: the first search, then ``searches`` more; peak RSS at the end."""
    embedder = OnnxLocalEmbedder()
    embedder.load()
    embedder.embed(["warm up"], "search_query")
    settings = Settings(data_dir=data_dir)
    service = Service(SqliteStore(settings.sqlite_path), embedder, settings, clock=lambda: now)
    bodies = [SearchRequest.model_validate(b) for b in search_bodies(searches + 21, seed=7, now=now)]
    began = time.perf_counter()
    service.search("bench", bodies[0], "bench")
    first = time.perf_counter() - began
    totals, embeds, retrievals = [], [], []
    for body in bodies[1:21]:
        service.search("bench", body, "bench")
    for body in tqdm(bodies[21:], desc=f"{label}: searching", unit="q", file=sys.stderr):
        began = time.perf_counter()
        reply = service.search("bench", body, "bench")
        totals.append((time.perf_counter() - began) * 1000)
        embeds.append(reply.latency.embed)
        retrievals.append(reply.latency.retrieval)
    store = service.store
    assert isinstance(store, SqliteStore)
    recall = vector_recall(store, embedder, [b.query for b in bodies[1:31]], now) if label == "restart" else {}
    store.close()  # saves the index if it was built here
    return {
        **recall,
        "first_s": first,
        "p50": float(np.percentile(totals, 50)),
        "p95": float(np.percentile(totals, 95)),
        "embed_p50": float(np.percentile(embeds, 50)),
        "retrieval_p50": float(np.percentile(retrievals, 50)),
        "retrieval_p95": float(np.percentile(retrievals, 95)),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def vector_recall(store: SqliteStore, embedder: OnnxLocalEmbedder, queries: list[str], now: Any) -> dict[str, float]:
    """Recall@40 of the store's vector retriever against exact brute force over every float32
    vector in SQLite, without a filter and with one (``sources=github``), for ``queries``."""
    from neural_memory.domain.filters import Filter

    vectors = np.asarray(embedder.embed(queries, "search_query"), dtype=np.float32)
    conn = store._reader().conn
    filters = {"all": Filter(live_at=now), "github": Filter(live_at=now, sources=("github",))}
    exact: dict[str, list[list[tuple[float, str]]]] = {name: [[] for _ in queries] for name in filters}
    cursor = conn.execute(
        "SELECT o.id || '#' || c.chunk_no, o.source, c.embedding FROM chunks c JOIN observations o ON o.pk = c.obs_pk "
        "WHERE c.model_id = ? AND o.workspace_id = 'bench'",
        (embedder.model_id,),
    )
    with tqdm(desc="recall: exact scan", unit="rows", file=sys.stderr) as progress:
        while batch := cursor.fetchmany(50_000):
            keys = [r[0] for r in batch]
            github = np.array([r[1] == "github" for r in batch])
            scores = np.frombuffer(b"".join(r[2] for r in batch), dtype=np.float32).reshape(len(batch), -1) @ vectors.T
            for name, keep in (("all", np.ones(len(batch), dtype=bool)), ("github", github)):
                for q in range(len(queries)):
                    column = np.where(keep, scores[:, q], -np.inf)
                    top = np.argpartition(-column, min(40, len(column) - 1))[:40]
                    exact[name][q] = sorted(exact[name][q] + [(float(column[i]), keys[i]) for i in top], reverse=True)[
                        :40
                    ]
            progress.update(len(batch))
    out = {}
    for name, flt in filters.items():
        recalls = []
        for q, vector in enumerate(vectors):
            hits = store.retrieve(
                "bench", text=None, vector=vector.tolist(), model_id=embedder.model_id, flt=flt, limit=40
            )
            found = {f"{h.observation.id}#{h.chunk_no}" for h in hits.vector}
            recalls.append(len(found & {key for _, key in exact[name][q]}) / 40)
        out[f"recall_{name}"] = float(np.mean(recalls))
    return out


def _child(data_dir: Path, searches: int, now: Any, label: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.scale", "--measure", str(data_dir), "--searches", str(searches)]
    command += ["--now", to_iso(now), "--label", label]
    out = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--embed-pool", type=int, default=2000)
    parser.add_argument("--data-dir", type=Path, help="keep the store here (reused when it exists)")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--now", help=argparse.SUPPRESS)
    parser.add_argument("--label", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.searches, from_iso(args.now), args.label)))
        return

    data_dir = args.data_dir or Path(f".bench-data/scale-{args.size}")
    now = built_store(args.size, data_dir, args.embed_pool)
    for stale in data_dir.glob("*.mirror*"):
        stale.unlink()  # the first run must build the index, as a store's first search does
    cold = _child(data_dir, 20, now, "first start")
    warm = _child(data_dir, args.searches, now, "restart")
    print(
        f"{args.size} observations in one workspace, hybrid + filter, {args.searches} searches: "
        f"p50 {warm['p50']:.1f} ms, p95 {warm['p95']:.1f} ms (query embed p50 {warm['embed_p50']:.0f} ms; "
        f"retrieval p50 {warm['retrieval_p50']:.0f} ms, p95 {warm['retrieval_p95']:.0f} ms); "
        f"first search of a new store (builds and saves the index): {cold['first_s']:.1f} s; "
        f"first search after a restart: {warm['first_s']:.2f} s; "
        f"peak resident memory after a restart and {args.searches} searches: {warm['peak_rss_mb']:.0f} MB "
        f"(the process that built the index: {cold['peak_rss_mb']:.0f} MB); vector recall@40 against "
        f"exact brute force: {warm['recall_all']:.3f} unfiltered, {warm['recall_github']:.3f} filtered",
        flush=True,
    )


if __name__ == "__main__":
    main()
