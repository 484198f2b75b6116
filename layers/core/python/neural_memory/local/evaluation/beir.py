"""Retrieval quality on a BEIR-layout dataset (``corpus.jsonl[.gz]``, ``queries.jsonl``,
``qrels/<split>.tsv``): index it into a temporary embedded store through the service and score
the service's own search with nDCG@10 and recall@100."""

from __future__ import annotations

import gzip
import json
import math
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from neural_memory.models import ObservationIn, SearchRequest

if TYPE_CHECKING:
    from pathlib import Path

    from neural_memory.models import RerankMode, SearchMode
    from neural_memory.service import Service
    from neural_memory.settings import Settings

WORKSPACE = "eval"
INDEX_BATCH = 256
_EPOCH = datetime(2020, 1, 1, tzinfo=UTC)


@dataclass
class Dataset:
    """A BEIR dataset: documents (title, text), queries, and graded relevance per query."""

    corpus: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load_beir(folder: Path, split: str = "test") -> Dataset:
    """Read a BEIR folder; only queries that have judgments in ``split`` are kept."""
    corpus_path = folder / "corpus.jsonl"
    opener: Any = open
    if not corpus_path.exists():
        corpus_path, opener = folder / "corpus.jsonl.gz", gzip.open
    corpus: dict[str, tuple[str, str]] = {}
    with opener(corpus_path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                doc = json.loads(line)
                corpus[str(doc["_id"])] = (str(doc.get("title") or ""), str(doc.get("text") or ""))
    qrels: dict[str, dict[str, int]] = {}
    for n, line in enumerate((folder / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()):
        parts = line.strip().split("\t")
        if n == 0 or len(parts) != 3:
            continue
        qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    queries = {}
    for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            query = json.loads(line)
            if str(query["_id"]) in qrels:
                queries[str(query["_id"])] = str(query["text"])
    return Dataset(corpus=corpus, queries=queries, qrels=qrels)


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    """nDCG@k with graded gains ``rel`` and the log2 discount (as BEIR / pytrec_eval)."""
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int = 100) -> float:
    """Share of the relevant documents found in the first ``k``."""
    wanted = {doc for doc, rel in relevant.items() if rel > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def index(service: Service, dataset: Dataset) -> None:
    """Every document as a tier-A observation (no expiry, no recency effects), with progress."""
    from tqdm import tqdm

    ids = list(dataset.corpus)
    with tqdm(total=len(ids), unit="doc", desc="indexing", file=sys.stderr) as bar:
        for start in range(0, len(ids), INDEX_BATCH):
            batch = [
                ObservationIn.model_validate(
                    {
                        "id": doc_id,
                        "source": "beir",
                        "observationType": "document",
                        "tier": "A",
                        "occurredAt": _EPOCH,
                        "title": dataset.corpus[doc_id][0] or doc_id,
                        "content": dataset.corpus[doc_id][1],
                    }
                )
                for doc_id in ids[start : start + INDEX_BATCH]
            ]
            service.index(WORKSPACE, batch)
            bar.update(len(batch))


def evaluate(service: Service, dataset: Dataset, mode: SearchMode, rerank: RerankMode) -> dict[str, float]:
    """Mean nDCG@10 and recall@100 of the service's search over the dataset's queries."""
    from tqdm import tqdm

    ndcg, recall = [], []
    for query_id, text in tqdm(dataset.queries.items(), unit="q", desc=f"searching ({mode})", file=sys.stderr):
        request = SearchRequest.model_validate(
            {"query": text[:2000], "topK": 100, "mode": mode, "rerank": rerank, "llmFilter": False}
        )
        ranked = [r.id for r in service.search(WORKSPACE, request, "eval").results]
        ndcg.append(ndcg_at(ranked, dataset.qrels[query_id]))
        recall.append(recall_at(ranked, dataset.qrels[query_id]))
    return {"ndcg@10": sum(ndcg) / len(ndcg), "recall@100": sum(recall) / len(recall)}


def run(folder: Path, mode: SearchMode, rerank: RerankMode, split: str, settings: Settings) -> dict[str, Any]:
    """Index ``folder`` into a temporary store (embeddings cached in ``settings.data_dir``) and score it."""
    from neural_memory.local.evaluation.temporary_service import evaluation_service

    dataset = load_beir(folder, split)
    with evaluation_service(settings) as service:
        index(service, dataset)
        scores = evaluate(service, dataset, mode, rerank)
    return {**scores, "mode": mode, "rerank": rerank, "split": split, "queries": len(dataset.queries)}
