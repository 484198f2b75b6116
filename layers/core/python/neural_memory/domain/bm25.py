"""BM25's parameters, the same for both stores: the embedded store's mirror computes BM25 with
them, and the OpenSearch index is created with them as its default similarity (they are part of
its schema version: an index made with others is rebuilt by a reindex at the next deploy).

k1 0.9 and b 0.4 (the usual values for BEIR retrieval, against Lucene's 1.2 and 0.75): term
frequency saturates sooner and a long text is penalised less. On the development sets this lifted
keyword search (SciFact train nDCG@10 0.7009 → 0.7052, LoCoMo dev evidence recall@10 0.6035 →
0.6199) and the default hybrid with it (docs/benchmarks.md, ``bench.fusion_experiments --k1 --b``).
"""

from __future__ import annotations

K1 = 0.9
B = 0.4
