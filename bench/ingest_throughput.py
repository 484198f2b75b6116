"""Ingest throughput with the default local model: observations/s through ``Service.index``.

    python -m bench.ingest_throughput [--count 10000] [--batch 64]

Side by side, in the same run, the raw model: the same texts (what ingestion embeds: title and
chunk) through the embedder alone, sorted by length and in batches of its own size, with nothing
else; the ratio of the two is what ingestion costs on top of the model.

Short synthetic observations — a title and one sentence of 8-15 words, like a commit line, a PR
title or a chat turn — from GitHub, Vercel, notes and agents, with unique texts so the embedding
cache cannot help, indexed in batches into a fresh embedded store: validation, tiering, chunking,
embedding (one batch call per batch) and the SQLite/FTS5 write, as ``neural-memory ingest`` does.
By default the tier policy applies (pushes and deployments are never embedded);
``--all-embedded`` makes every observation tier A (the worst case); ``--long`` uses the 20-60-word
bodies of the search benchmark.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

from neural_memory.clock import utcnow
from neural_memory.domain.chunking import embedding_text
from neural_memory.domain.tiers import DEFAULT_POLICY, is_embedded, tier_for
from neural_memory.ingest.prepare import prepare
from neural_memory.runtime import build_service
from neural_memory.settings import Settings
from tqdm import tqdm

from bench.synthetic import observations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--long", action="store_true", help="20-60-word bodies instead of one short sentence")
    parser.add_argument("--all-embedded", action="store_true", help="make every observation tier A")
    args = parser.parse_args()
    now = utcnow()
    items = []
    for i, o in enumerate(observations(args.count, seed=11, now=now)):
        content = o.content if args.long else " ".join(o.content.split()[: 8 + i % 8]) + f" (#{i})"
        items.append(o.model_copy(update={"tier": "A" if args.all_embedded else None, "content": content}))
    with tempfile.TemporaryDirectory() as tmp:
        service = build_service(Settings(data_dir=Path(tmp)))
        assert service.embedder is not None
        service.embedder.embed(["warm up"], "search_document")
        began = time.perf_counter()
        with tqdm(total=len(items), unit="obs", desc="ingesting", file=sys.stderr) as bar:
            for start in range(0, len(items), args.batch):
                batch = items[start : start + args.batch]
                service.index("bench", batch)
                bar.update(len(batch))
        seconds = time.perf_counter() - began
        count = service.store.count("bench")
        texts = [
            embedding_text(prepared.record.title, chunk.text)
            for prepared in (prepare(o, now=now, policy=DEFAULT_POLICY, ttl_days=7) for o in items)
            if is_embedded(prepared.record.tier)
            for chunk in prepared.chunks
            if chunk.embedded
        ]
        began = time.perf_counter()
        service.embedder.embed(sorted(texts, key=len), "search_document")
        raw_seconds = time.perf_counter() - began
    words = sum(len(f"{o.title} {o.content}".split()) for o in items) / len(items)
    embedded = sum(1 for o in items if is_embedded(tier_for(o.observation_type, o.tier, DEFAULT_POLICY)))
    print(
        f"{count} observations ({words:.0f} words each on average; {embedded} embedded, unique texts) "
        f"in {seconds:.1f} s: {count / seconds:.0f} observations/s"
    )
    print(
        f"raw model on the same {len(texts)} texts, nothing else: {raw_seconds:.1f} s "
        f"({count / raw_seconds:.0f} observations/s); ingestion reaches {raw_seconds / seconds:.0%} of it"
    )


if __name__ == "__main__":
    main()
