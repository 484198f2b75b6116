"""The pairwise cosines behind near-duplicate collapse and MMR: the Lambda layer has no numpy, so
the pure-Python path must give the numpy path's numbers."""

from __future__ import annotations

import random
import sys

import pytest
from neural_memory.search.diversity import _pairwise


def test_without_numpy_the_cosines_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given vectors of mixed lengths (not unit), one missing and one all zero
    rng = random.Random(7)
    vectors = [[rng.uniform(-1, 1) for _ in range(32)] for _ in range(5)]
    vectors[2] = [0.0] * 32
    given = [*vectors[:3], None, *vectors[3:]]
    with_numpy = _pairwise(given)
    # When numpy cannot be imported (as in the Lambda layer)
    monkeypatch.setitem(sys.modules, "numpy", None)
    without = _pairwise(given)
    # Then every cosine matches, and pairs with the missing vector are None both ways
    assert [[x is None for x in row] for row in without] == [[x is None for x in row] for row in with_numpy]
    for row_a, row_b in zip(with_numpy, without, strict=True):
        for a, b in zip(row_a, row_b, strict=True):
            assert a is None or b == pytest.approx(a, abs=1e-5)
    assert without[0][0] == pytest.approx(1.0) and without[2][2] == pytest.approx(0.0)
