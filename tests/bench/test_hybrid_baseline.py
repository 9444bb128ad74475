"""The hybrid baseline's two halves and their fusion, against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from commonplace_bench.hybrid import BM25, fused_order, words


def test_bm25_scores_are_okapis_formula() -> None:
    texts = ["the cat sat", "the dog sat on the dog mat", "birds"]
    bm25 = BM25(texts)
    lengths, mean = [3, 7, 1], 11 / 3

    def expected(doc: int, tf: int, df: int) -> float:
        idf = math.log(1 + (3 - df + 0.5) / (df + 0.5))
        return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * lengths[doc] / mean))

    scores = bm25.scores("Dog sat?")
    assert scores[0] == pytest.approx(expected(0, 1, 2))  # "sat" only
    assert scores[1] == pytest.approx(expected(1, 2, 1) + expected(1, 1, 2))
    assert scores[2] == 0.0
    assert bm25.scores("unicorn").tolist() == [0.0, 0.0, 0.0]
    assert BM25([]).scores("cat").shape == (0,)


def test_words_are_lower_cased_runs_of_letters_and_digits() -> None:
    assert words("Moved to Porto in 2023, w/ Joana!") == [
        "moved", "to", "porto", "in", "2023", "w", "joana",
    ]  # fmt: skip


def test_fusion_ranks_by_the_sum_of_reciprocal_ranks() -> None:
    dense = np.array([0.9, 0.8, 0.1, 0.0])  # ranks 0 1 2 3
    keyword = np.array([0.0, 5.0, 4.0, 3.0])  # ranks 3 0 1 2
    # fused: 1/60+1/63, 1/61+1/60, 1/62+1/61, 1/63+1/62 -> 1, 0, 2, 3
    assert fused_order(dense, keyword, k=60).tolist() == [1, 0, 2, 3]
    assert fused_order(dense).tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        fused_order()
