"""Fusion experiments on both development sets: which way of combining the lexical and vector
lists holds on documents (SciFact train, nDCG@10) *and* conversations (LoCoMo dev, evidence
recall@10, cross-validated by leaving one conversation out).

    python -m bench.fusion_experiments --scifact DIR --locomo DIR [--split train] [--only NAME ...]
        [--turn-context N] [--title-weight W] [--k1 K1] [--b B]

Each query's two candidate lists are retrieved once through the service's store, exactly as a
search retrieves them (same limits, same filter, the model's similarity floor); every method is
then applied to the same lists, so the methods are compared on equal terms. Each data set is
indexed into a store of its own (BM25's idf counts every row of a store). The other options change
what is indexed, for experiments: a chat turn embedded after the turns before it in its session,
the title's BM25 weight, BM25's k1 and b (the embedded store only).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

from typing import TYPE_CHECKING

from neural_memory.clock import utcnow
from neural_memory.domain.filters import Filter
from neural_memory.local.evaluation import beir as evaluation
from neural_memory.local.evaluation import conversations
from neural_memory.models import Hit
from neural_memory.runtime import build_service
from neural_memory.search.fusion import fuse
from neural_memory.settings import Settings
from tqdm import tqdm

if TYPE_CHECKING:
    from collections.abc import Callable

    from neural_memory.service import Service

Lists = tuple[list[Hit], list[Hit], tuple[bool, bool]]  # lexical, vector (above the floor), cut


@dataclass
class Query:
    """A query's retrieved lists and what counts as relevant."""

    group: str  # the conversation (LoCoMo) or "scifact"
    lists: Lists
    relevant: dict[str, int]


def retrieve(service: Service, workspace: str, text: str, limit: int) -> Lists:
    """The lexical and vector lists a hybrid search of ``text`` would fuse."""
    embedder = service.embedder
    assert embedder is not None
    vector = embedder.embed([text], "search_query")[0]
    found = service.store.retrieve(
        workspace, text=text, vector=vector, model_id=embedder.model_id, flt=Filter(live_at=utcnow()), limit=limit
    )
    floor = service.settings.min_similarity_for(embedder.model_id)
    cut = (len(found.lexical) >= limit, len(found.vector) >= limit)
    return found.lexical, [hit for hit in found.vector if hit.score >= floor], cut


def scifact_queries(service: Service, folder: Path, split: str) -> list[Query]:
    """SciFact ``split`` queries (top 100 searched, so 400 candidates per list)."""
    dataset = evaluation.load_beir(folder, split)
    evaluation.index(service, dataset)
    return [
        Query("scifact", retrieve(service, evaluation.WORKSPACE, text[:2000], 400), dataset.qrels[query_id])
        for query_id, text in tqdm(dataset.queries.items(), desc=f"scifact {split}", file=sys.stderr)
    ]


def with_turn_context(talks: list[conversations.Conversation], turns: int) -> None:
    """Experiment: embed each turn after the ``turns`` turns before it in its session (the lexical
    index is unchanged). Patches what the service embeds for these turns' texts only."""
    import neural_memory.service as service_module
    from neural_memory.domain.chunking import embedding_text
    from neural_memory.ingest.prepare import resolved_title

    context: dict[tuple[str, str], str] = {}
    for talk in talks:
        previous: dict[str | None, list[str]] = {}
        for turn in talk.turns:
            before = previous.setdefault(turn.session_id, [])
            if before:
                context[(resolved_title(turn), turn.content)] = "\n".join(before[-turns:])
            before.append(f"{turn.actor_name}: {turn.content}")

    def embedded(title: str, chunk_text: str) -> str:
        text = embedding_text(title, chunk_text)
        found = context.get((title, chunk_text))
        return f"{found}\n{text}" if found else text

    service_module.embedding_text = embedded  # type: ignore[attr-defined]


def lexical_experiment(title_weight: float | None, k1: float | None, b: float | None) -> None:
    """Experiment: other BM25 parameters in the embedded store (its mirror reads them at indexing
    and at search; OpenSearch would need the same in its index settings and title boost)."""
    from neural_memory.stores.sqlite import fts as sqlite_fts
    from neural_memory.stores.sqlite import mirror_search as sqlite_mirror_search

    if title_weight is not None:
        sqlite_fts.COLUMN_WEIGHTS["title"] = title_weight
    if k1 is not None:
        sqlite_mirror_search.BM25_K1 = k1  # type: ignore[attr-defined]
    if b is not None:
        sqlite_mirror_search.BM25_B = b  # type: ignore[attr-defined]


def locomo_queries(service: Service, folder: Path, turn_context: int = 0) -> list[Query]:
    """LoCoMo questions (top 10 searched, so 40 candidates per list)."""
    talks = conversations.load_conversations(folder)
    if turn_context:
        with_turn_context(talks, turn_context)
    out = []
    for talk in talks:
        for start in range(0, len(talk.turns), 100):
            service.index(talk.sample_id, talk.turns[start : start + 100])
        for question in tqdm(talk.questions, desc=f"locomo {talk.sample_id}", file=sys.stderr):
            lists = retrieve(service, talk.sample_id, question.text, 40)
            out.append(Query(talk.sample_id, lists, dict.fromkeys(question.evidence, 1)))
    return out


# ----------------------------------------------------------------------------- methods


def _best_per_observation(hits: list[Hit]) -> dict[str, float]:
    best: dict[str, float] = {}
    for hit in hits:
        best.setdefault(hit.observation.id, hit.score)
    return best


def absolute(alpha: float, floor: float) -> Callable[[Query], list[str]]:
    """The former default: cosine rescaled from [floor, 1] (absolute), BM25 / best."""

    def rank(query: Query) -> list[str]:
        lists = query.lists
        lexical, vector = _best_per_observation(lists[0]), _best_per_observation(lists[1])
        best_l = max(lexical.values(), default=1.0) or 1.0
        fused = {
            i: alpha * max(0.0, (vector.get(i, 0.0) - floor) / (1 - floor)) + (1 - alpha) * lexical.get(i, 0.0) / best_l
            for i in set(lexical) | set(vector)
        }
        return sorted(fused, key=lambda i: (-fused[i], i))

    return rank


def _anchored_scores(query: Query, floor: float) -> tuple[dict[str, float], dict[str, float]]:
    """The cosine rescaled from [floor, the query's best] and BM25 / best, by observation."""
    lexical, vector = _best_per_observation(query.lists[0]), _best_per_observation(query.lists[1])
    best_l = max(lexical.values(), default=1.0) or 1.0
    best_v = max(vector.values(), default=1.0)
    v = {i: max(0.0, (c - floor) / (best_v - floor)) if best_v > floor else 1.0 for i, c in vector.items()}
    return v, {i: c / best_l for i, c in lexical.items()}


def anchored(alpha: float, floor: float, impute: bool) -> Callable[[Query], list[str]]:
    """Cosine rescaled from [floor, the query's best] (relative, but anchored at the model's
    floor rather than at zero), BM25 / best; ``impute``: a missing score is the list's lowest."""

    def rank(query: Query) -> list[str]:
        v, lx = _anchored_scores(query, floor)
        miss_v = min(v.values(), default=0.0) if impute else 0.0
        miss_l = min(lx.values(), default=0.0) if impute else 0.0
        fused = {i: alpha * v.get(i, miss_v) + (1 - alpha) * lx.get(i, miss_l) for i in set(lx) | set(v)}
        return sorted(fused, key=lambda i: (-fused[i], i))

    return rank


def convex(alpha: float, floor: float) -> Callable[[Query], list[str]]:
    """The product's convex fusion (both sides relative to the query's best, the cosine from the
    model's floor; a missing score from a cut list is that list's lowest)."""

    def rank(query: Query) -> list[str]:
        lists = query.lists
        fused = fuse(lists[0], lists[1], method="convex", alpha=alpha, min_similarity=floor, cut=lists[2])
        return [c.observation.id for c in fused]

    return rank


def rrf(k: int) -> Callable[[Query], list[str]]:
    """The product's reciprocal-rank fusion."""

    def rank(query: Query) -> list[str]:
        lists = query.lists
        return [c.observation.id for c in fuse(lists[0], lists[1], method="rrf", k=k)]

    return rank


def normalised(alpha: float, how: str) -> Callable[[Query], list[str]]:
    """Both lists normalised the same way over the query's own candidates, then mixed, a missing
    score taking the list's lowest: ``max`` (divided by the best), ``minmax`` (to [0, 1]) or
    ``zscore`` (distribution-based: mean 0, sd 1)."""

    def scale(scores: dict[str, float]) -> dict[str, float]:
        if not scores:
            return {}
        values = list(scores.values())
        if how == "max":
            high = max(values)
            return {k: v / high if high > 0 else 0.0 for k, v in scores.items()}
        if how == "minmax":
            low, high = min(values), max(values)
            return {k: (v - low) / (high - low) if high > low else 1.0 for k, v in scores.items()}
        mean = sum(values) / len(values)
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
        return {k: (v - mean) / sd for k, v in scores.items()}

    def rank(query: Query) -> list[str]:
        lists = query.lists
        lexical, vector = scale(_best_per_observation(lists[0])), scale(_best_per_observation(lists[1]))
        missing_l = min(lexical.values(), default=0.0)
        missing_v = min(vector.values(), default=0.0)
        ids = set(lexical) | set(vector)
        fused = {i: alpha * vector.get(i, missing_v) + (1 - alpha) * lexical.get(i, missing_l) for i in ids}
        return sorted(fused, key=lambda i: (-fused[i], i))

    return rank


def spread_weighted(floor: float, base: float, depth: int, strength: float) -> Callable[[Query], list[str]]:
    """Query-dependent weights from the two score distributions: each list's weight grows with how
    far its best stands out from the rest of its top ``depth`` (a list whose scores are flat tells
    little apart: short chat turns under a vector model). ``alpha = base`` when both stand out
    alike, moved toward the sharper list by ``strength``. Scores scaled as in the product's fusion."""

    def sharpness(scores: list[float]) -> float:
        top = sorted(scores, reverse=True)[:depth]
        if len(top) < 2 or top[0] <= 0:
            return 0.0
        return (top[0] - sum(top[1:]) / (len(top) - 1)) / top[0]

    def rank(query: Query) -> list[str]:
        lists = query.lists
        v, lx = _anchored_scores(query, floor)
        sharp_v, sharp_l = sharpness(list(v.values())), sharpness(list(lx.values()))
        total = sharp_v + sharp_l
        alpha = base if total == 0 else (1 - strength) * base + strength * sharp_v / total
        miss_v = min(v.values(), default=0.0) if lists[2][1] else 0.0
        miss_l = min(lx.values(), default=0.0) if lists[2][0] else 0.0
        fused = {i: alpha * v.get(i, miss_v) + (1 - alpha) * lx.get(i, miss_l) for i in set(lx) | set(v)}
        return sorted(fused, key=lambda i: (-fused[i], i))

    return rank


def general(
    alpha: float,
    floor: float,
    *,
    anchor: float | None = None,
    absolute_mix: float = 0.0,
    chunk_bonus: float = 0.0,
    both_bonus: float = 0.0,
) -> Callable[[Query], list[str]]:
    """The product's convex fusion with one knob more at a time (all zero: the product's default).

    ``anchor``: the cosine that maps to 0 (the model's floor by default; hits below the floor are
    dropped either way). ``absolute_mix``: share of the absolute cosine scale, ``(c - anchor) /
    (1 - anchor)``, mixed into the relative one, ``(c - anchor) / (best - anchor)`` (1 = the former
    default's scale). ``chunk_bonus``: an observation's score on a side is its best chunk's plus
    this share of its other chunks' scores on that side (several passages of one document match).
    ``both_bonus``: added when both retrievers found the observation (CombMNZ's idea)."""
    zero = floor if anchor is None else anchor

    def side(hits: list[Hit], scale: Callable[[float], float]) -> dict[str, float]:
        out: dict[str, float] = {}
        seen: set[str] = set()
        for hit in hits:  # best first: an observation's first hit is its best chunk
            key = hit.observation.id
            value = scale(hit.score)
            if key in seen:
                out[key] += chunk_bonus * value
            else:
                seen.add(key)
                out[key] = value
        return out

    def rank(query: Query) -> list[str]:
        lexical_hits, vector_hits, cut = query.lists
        best_v = max((h.score for h in vector_hits), default=1.0)

        def cosine(c: float) -> float:
            relative = 1.0 if best_v <= zero else max(0.0, (c - zero) / (best_v - zero))
            return (1 - absolute_mix) * relative + absolute_mix * max(0.0, (c - zero) / (1 - zero))

        v = side(vector_hits, cosine)
        lx = side(lexical_hits, float)
        # The lowest hit of a cut list stands in for a missing score, as in the product.
        miss_v = cosine(min(h.score for h in vector_hits)) if cut[1] and vector_hits else 0.0
        miss_l = min(h.score for h in lexical_hits) if cut[0] and lexical_hits else 0.0
        fused = {
            i: alpha * v.get(i, miss_v) + (1 - alpha) * lx.get(i, miss_l) + both_bonus * (i in v and i in lx)
            for i in set(lx) | set(v)
        }
        return sorted(fused, key=lambda i: (-fused[i], -v.get(i, 0.0), -lx.get(i, 0.0), i))

    return rank


# ----------------------------------------------------------------------------- scoring


def score(queries: list[Query], method: Callable[[Query], list[str]], metric: str) -> float:
    """Mean nDCG@10 or evidence recall@10 of ``method`` over ``queries``."""
    values = []
    for query in queries:
        ranked = method(query)
        if metric == "ndcg":
            values.append(evaluation.ndcg_at(ranked, query.relevant))
        else:
            values.append(len(set(ranked[:10]) & set(query.relevant)) / len(query.relevant))
    return sum(values) / len(values) if values else 0.0


def _methods(floor: float) -> dict[str, Callable[[Query], list[str]]]:
    """Every method of the grid, by name."""
    methods: dict[str, Callable[[Query], list[str]]] = {"keyword": lambda q: list(_best_per_observation(q.lists[0]))}
    methods["semantic"] = lambda q: list(_best_per_observation(q.lists[1]))
    for alpha in (0.3, 0.4, 0.5, 0.6, 0.7):
        methods[f"absolute a={alpha}"] = absolute(alpha, floor)
    for alpha in (0.45, 0.5, 0.55, 0.6):
        methods[f"convex a={alpha}"] = convex(alpha, floor)
    for alpha in (0.5, 0.55, 0.6, 0.65):
        methods[f"relative a={alpha}"] = normalised(alpha, "max")
    for impute in (False, True):
        for alpha in (0.5, 0.6):
            methods[f"anchored{'+imp' if impute else ''} a={alpha}"] = anchored(alpha, floor, impute)
    for k in (5, 20, 60):
        methods[f"rrf k={k}"] = rrf(k)
    for how in ("minmax", "zscore"):
        for alpha in (0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7):
            methods[f"{how} a={alpha}"] = normalised(alpha, how)

    for base in (0.5, 0.6):
        for depth in (5, 10):
            for strength in (0.25, 0.5, 0.75, 1.0):
                methods[f"spread b={base} d={depth} s={strength}"] = spread_weighted(floor, base, depth, strength)
    return methods | _knob_methods(floor)


def _knob_methods(floor: float) -> dict[str, Callable[[Query], list[str]]]:
    """The product's fusion with one knob changed at a time (``general``)."""
    methods = {"general a=0.5": general(0.5, floor)}  # must equal "convex a=0.5"
    for bonus in (0.05, 0.1, 0.2, 0.3):
        methods[f"chunks+{bonus} a=0.5"] = general(0.5, floor, chunk_bonus=bonus)
    for bonus in (0.02, 0.05, 0.1):
        methods[f"both+{bonus} a=0.5"] = general(0.5, floor, both_bonus=bonus)
    for anchor in (0.0, 0.1, 0.3):
        for alpha in (0.5, 0.6):
            methods[f"anchor={anchor} a={alpha}"] = general(alpha, floor, anchor=anchor)
    for mix in (0.25, 0.5, 0.75):
        for alpha in (0.5, 0.6, 0.7):
            methods[f"absmix={mix} a={alpha}"] = general(alpha, floor, absolute_mix=mix)
    # Second round, around what the first round found (anchor 0.1, absolute share 0.75).
    for anchor in (0.05, 0.1, 0.15):
        for alpha in (0.45, 0.5, 0.55):
            methods[f"anchor={anchor} a={alpha}"] = general(alpha, floor, anchor=anchor)
    for mix in (0.6, 0.75, 0.9):
        for alpha in (0.55, 0.6, 0.65):
            methods[f"absmix={mix} a={alpha}"] = general(alpha, floor, absolute_mix=mix)
    methods["anchor=0.1 both+0.02 a=0.5"] = general(0.5, floor, anchor=0.1, both_bonus=0.02)
    methods["anchor=0.1 absmix=0.5 a=0.55"] = general(0.55, floor, anchor=0.1, absolute_mix=0.5)
    return methods


def run_in_own_store(settings: Settings, retrieve_all: Callable[[Service], list[Query]]) -> tuple[list[Query], float]:
    """``retrieve_all`` against a fresh temporary store (embeddings from the shared cache), and
    the model's similarity floor."""
    with tempfile.TemporaryDirectory(prefix="nm-fusion-") as tmp:
        service = build_service(settings.model_copy(update={"data_dir": Path(tmp)}))
        if service.embedding_cache is not None:
            from neural_memory.providers.embeddings.cache import EmbeddingCache

            service.embedding_cache = EmbeddingCache(settings.embedding_cache_path)
        floor = settings.min_similarity_for(service.embedder.model_id if service.embedder else None)
        return retrieve_all(service), floor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scifact", type=Path, help="SciFact in BEIR layout (left out if not given)")
    parser.add_argument("--locomo", type=Path, required=True, help="a folder with LoCoMo's JSON")
    parser.add_argument("--split", default="train", help="SciFact split to tune on")
    parser.add_argument("--turn-context", type=int, default=0, help="experiment: embed turns after N turns before")
    parser.add_argument("--title-weight", type=float, help="experiment: the title's BM25 term weight (default 2)")
    parser.add_argument("--k1", type=float, help="experiment: BM25 k1 of the embedded store (default 1.2)")
    parser.add_argument("--b", type=float, help="experiment: BM25 b of the embedded store (default 0.75)")
    parser.add_argument("--only", nargs="*", help="run only the methods whose names contain one of these")
    args = parser.parse_args()

    lexical_experiment(args.title_weight, args.k1, args.b)
    settings = Settings()
    # Each data set in a store of its own, as a user would hold it: BM25's idf counts every row
    # of the store, so SciFact's abstracts in the same store would change LoCoMo's keyword scores.
    science: list[Query] = []
    if args.scifact:
        science, _ = run_in_own_store(settings, lambda s: scifact_queries(s, args.scifact, args.split))
    talk, floor = run_in_own_store(settings, lambda s: locomo_queries(s, args.locomo, args.turn_context))

    methods = _methods(floor)
    if args.only:
        methods = {name: method for name, method in methods.items() if any(p in name for p in args.only)}

    groups = sorted({q.group for q in talk})
    print(f"{'method':<16} {'SciFact ' + args.split + ' nDCG@10':>22} {'LoCoMo recall@10':>17}  per conversation")
    for name, method in methods.items():
        per = [score([q for q in talk if q.group == g], method, "recall") for g in groups]
        documents = f"{score(science, method, 'ndcg'):.4f}" if science else "-"
        print(
            f"{name:<16} {documents:>22} {score(talk, method, 'recall'):>17.4f}  " + " ".join(f"{v:.3f}" for v in per),
            flush=True,
        )


if __name__ == "__main__":
    main()
