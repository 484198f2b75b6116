"""Search latency through the service at 10k and 100k observations (handlers' cold import:
``python -m bench.cold_import``).

    python -m bench.search_latency [--sizes 10000 100000] [--searches 300] [--embed-pool 2000]

Documents get real vectors from the local model: a pool of distinct synthetic texts is embedded
and each observation takes a pool vector plus small noise (exact brute-force k-NN costs the same
whatever the vector values; ``--embed-pool 0`` embeds every observation, about 5 min per 100k).
Every search embeds its query with the real model, runs hybrid retrieval with a filter, fuses
and builds the reply — ``Service.search`` end to end, timed from outside.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")  # EMF lines would flood the terminal

import numpy as np
from neural_memory.clock import utcnow
from neural_memory.domain.chunking import embedding_text
from neural_memory.domain.tiers import DEFAULT_POLICY, is_embedded
from neural_memory.ingest.prepare import prepare
from neural_memory.models import SearchRequest
from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
from neural_memory.service import Service
from neural_memory.settings import Settings
from neural_memory.stores.sqlite.store import SqliteStore
from tqdm import tqdm

from bench.log_sink import discard_log_output
from bench.synthetic import observations, search_bodies


def build(size: int, root: Path, embedder: OnnxLocalEmbedder, pool: int, now: object) -> Service:
    settings = Settings(data_dir=root / f"n{size}")
    store = SqliteStore(settings.sqlite_path)
    items = [prepare(o, now=now, policy=DEFAULT_POLICY, ttl_days=7) for o in observations(size, seed=size, now=now)]  # type: ignore[arg-type]
    targets = [item for item in items if is_embedded(item.record.tier)]
    texts = [embedding_text(i.record.title, i.chunks[0].text) for i in targets]
    rng = np.random.default_rng(size)
    unique = texts if pool <= 0 else list(dict.fromkeys(texts))[:pool]
    vectors: dict[str, list[float]] = {}
    for start in tqdm(range(0, len(unique), 256), desc=f"embedding {len(unique)} texts", unit="batch", file=sys.stderr):
        batch = unique[start : start + 256]
        vectors.update(zip(batch, embedder.embed(batch, "search_document"), strict=True))
    keys = list(vectors)
    for item, text in zip(targets, texts, strict=True):
        base = np.asarray(vectors.get(text) or vectors[keys[rng.integers(len(keys))]], dtype=np.float32)
        noisy = base + rng.normal(0, 0.02, base.shape).astype(np.float32)
        item.chunks[0].vector = (noisy / np.linalg.norm(noisy)).tolist()
        item.model_id = embedder.model_id
    for start in tqdm(range(0, len(items), 1000), desc=f"indexing {size}", unit="k obs", file=sys.stderr):
        store.write("bench", items[start : start + 1000])
    return Service(store, embedder, settings, clock=lambda: now)  # type: ignore[arg-type, return-value]


def measure(service: Service, searches: int, now: object) -> dict[str, float]:
    bodies = [SearchRequest.model_validate(b) for b in search_bodies(searches + 20, seed=7, now=now)]  # type: ignore[arg-type]
    began = time.perf_counter()
    service.search("bench", bodies[0], "bench")  # the first search loads the in-memory mirror
    first = (time.perf_counter() - began) * 1000
    for body in bodies[1:20]:  # warm-up
        service.search("bench", body, "bench")
    totals, embeds, retrievals, counts = [], [], [], []
    for body in tqdm(bodies[20:], desc="searching", unit="q", file=sys.stderr):
        began = time.perf_counter()
        reply = service.search("bench", body, "bench")
        totals.append((time.perf_counter() - began) * 1000)
        embeds.append(reply.latency.embed)
        retrievals.append(reply.latency.retrieval)
        counts.append(len(reply.results))
    return {
        "p50": float(np.percentile(totals, 50)),
        "p95": float(np.percentile(totals, 95)),
        "embed_p50": float(np.percentile(embeds, 50)),
        "retrieval_p50": float(np.percentile(retrievals, 50)),
        "retrieval_p95": float(np.percentile(retrievals, 95)),
        "results_mean": float(np.mean(counts)),
        "first": first,
        "restart": _first_search_after_restart(service, bodies[0]),
    }


def _first_search_after_restart(service: Service, body: SearchRequest) -> float:
    """Milliseconds of the first search of a new process on the same data (the saved mirror loads)."""
    store = service.store
    assert isinstance(store, SqliteStore)
    store.close()  # as `serve` does on exit: the mirror is saved next to the database
    restarted = Service(SqliteStore(service.settings.sqlite_path), service.embedder, service.settings)
    began = time.perf_counter()
    restarted.search("bench", body, "bench")
    return (time.perf_counter() - began) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--embed-pool", type=int, default=2000)
    args = parser.parse_args()

    discard_log_output()  # a "search complete" line per search
    embedder = OnnxLocalEmbedder()
    embedder.load()
    now = utcnow()
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            service = build(size, Path(tmp), embedder, args.embed_pool, now)
            r = measure(service, args.searches, now)
            print(
                f"{size:>7} observations, hybrid + filter, {args.searches} searches: "
                f"p50 {r['p50']:.1f} ms, p95 {r['p95']:.1f} ms "
                f"(query embed p50 {r['embed_p50']:.0f} ms; retrieval p50 {r['retrieval_p50']:.0f} ms, "
                f"p95 {r['retrieval_p95']:.0f} ms; {r['results_mean']:.1f} results/query; "
                f"first search, loading the mirror: {r['first'] / 1000:.1f} s; "
                f"first search after a restart: {r['restart'] / 1000:.2f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
