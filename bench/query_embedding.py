"""Query-embedding latency of a local model: one short query, warm, many repeats.

    NM_LOCAL_MODEL=<name> python -m bench.query_embedding [--repeats 300]

The embedder is the one the settings build (``NM_LOCAL_MODEL`` picks the row of
``providers/embeddings/local_models.MODELS``); it is loaded and warmed first, then one short query
is embedded ``--repeats`` times on the calling thread, as a search does. Also prints the size of
the model's installed files (the model, its tokenizer). The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

from neural_memory.providers.embeddings import build_embedder
from neural_memory.providers.embeddings.onnx_local import OnnxLocalEmbedder
from neural_memory.settings import Settings

QUERY = "when did Caroline go to the support group"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=300)
    args = parser.parse_args()
    embedder = build_embedder(Settings(embedder="onnx"))
    assert isinstance(embedder, OnnxLocalEmbedder)
    spec = embedder.spec
    embedder.load()
    for _ in range(20):
        embedder.embed([QUERY], "search_query")
    times = []
    for _ in range(args.repeats):
        began = time.perf_counter()
        embedder.embed([QUERY], "search_query")
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    files = [spec.model_file()] + ([spec.tokenizer_file()] if spec.tokenizer_file else [])
    size_mb = sum(f.stat().st_size for f in files) / 1e6
    result = {
        "model": spec.name,
        "model_id": spec.model_id,
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[int(len(times) * 0.95) - 1], 2),
        "model_mb": round(size_mb, 1),
    }
    print(f"{spec.name}: query embedding p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms; files {size_mb:.1f} MB")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
