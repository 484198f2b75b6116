"""``/v1/experts`` against a plain search on the same store (100k observations by default): the
same query bodies (hybrid, with a filter), alternated, each timed from outside through the
service, and the ratio of the p95s (the acceptance bound is 1.5).

    python -m bench.experts_latency [--size 100000] [--searches 300] [--embed-pool 2000]

The store is built as ``bench.search_latency`` builds it (real query embeddings from the local
model, pool vectors plus noise for the documents).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")  # EMF lines would flood the terminal

import numpy as np
from neural_memory.clock import utcnow
from neural_memory.models import ExpertsRequest, SearchRequest
from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder

from bench.log_sink import discard_log_output
from bench.search_latency import build
from bench.synthetic import search_bodies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--embed-pool", type=int, default=2000)
    args = parser.parse_args()
    discard_log_output()  # a "search complete" line per search

    embedder = OnnxLocalEmbedder()
    embedder.load()
    now = utcnow()
    with tempfile.TemporaryDirectory() as tmp:
        service = build(args.size, Path(tmp), embedder, args.embed_pool, now)
        bodies = search_bodies(args.searches + 20, seed=7, now=now)
        searches = [SearchRequest.model_validate(b) for b in bodies]
        experts = [ExpertsRequest.model_validate({k: b[k] for k in ("query", "mode", "filters")}) for b in bodies]
        for search, asked in zip(searches[:20], experts[:20], strict=True):  # warm-up (loads the mirror)
            service.search("bench", search, "bench")
            service.experts("bench", asked, "bench")
        plain: list[float] = []
        ranked: list[float] = []
        actors: list[int] = []
        for search, asked in zip(searches[20:], experts[20:], strict=True):  # alternated: same conditions
            began = time.perf_counter()
            service.search("bench", search, "bench")
            plain.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            reply = service.experts("bench", asked, "bench")
            ranked.append((time.perf_counter() - began) * 1000)
            actors.append(len(reply.experts))
        p95_plain, p95_experts = float(np.percentile(plain, 95)), float(np.percentile(ranked, 95))
        print(
            f"{args.size:>7} observations, hybrid + filter, {args.searches} of each: "
            f"search p50 {np.percentile(plain, 50):.1f} ms, p95 {p95_plain:.1f} ms; "
            f"experts p50 {np.percentile(ranked, 50):.1f} ms, p95 {p95_experts:.1f} ms "
            f"({np.mean(actors):.1f} actors/query); p95 ratio {p95_experts / p95_plain:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
