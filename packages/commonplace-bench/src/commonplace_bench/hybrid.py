"""Hybrid search over raw turns: Okapi BM25 and cosine similarity fused by reciprocal rank.

The strongest of the simple baselines a memory layer is compared with: what a user of
Weaviate's hybrid query, LlamaIndex's fusion retriever or a BM25 library gets without
writing anything. Both halves rank every turn; a turn's fused score is the sum over the
two rankings of ``1 / (k + rank)`` (rank from 0, ``k`` 60), and the caller packs turns
whole in that order until its budget is spent.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["BM25", "fused_order", "words"]

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """Lower-cased word tokens, as BM25 reads them (no stemming, no stop words)."""
    return _WORD.findall(text.lower())


class BM25:
    """Okapi BM25 over a fixed list of texts (``k1`` 1.2, ``b`` 0.75)."""

    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        docs = [words(t) for t in texts]
        self._k1, self._b = k1, b
        self._n = len(docs)
        self._lengths = np.asarray([len(d) for d in docs], np.float32)
        self._mean_length = float(self._lengths.mean()) if docs else 0.0
        # a posting list per word: the documents that hold it and how often
        postings: dict[str, dict[int, int]] = {}
        for i, doc in enumerate(docs):
            for word, count in Counter(doc).items():
                postings.setdefault(word, {})[i] = count
        self._postings = postings

    def scores(self, query: str) -> np.ndarray[Any, Any]:
        """Every text's score for ``query`` (0 for a text that shares no word with it)."""
        out = np.zeros(self._n, np.float32)
        if not self._n:
            return out
        norm = self._k1 * (1 - self._b + self._b * self._lengths / max(self._mean_length, 1e-9))
        for word in set(words(query)):
            posting = self._postings.get(word)
            if not posting:
                continue
            df = len(posting)
            idf = math.log(1 + (self._n - df + 0.5) / (df + 0.5))
            rows = np.fromiter(posting, np.int64, len(posting))
            tf = np.fromiter(posting.values(), np.float32, len(posting))
            out[rows] += idf * tf * (self._k1 + 1) / (tf + norm[rows])
        return out


def fused_order(*scores: np.ndarray[Any, Any], k: int = 60) -> np.ndarray[Any, Any]:
    """Indexes best first by reciprocal rank fusion of the rankings ``scores`` give."""
    if not scores:
        raise ValueError("fused_order needs at least one ranking")
    n = len(scores[0])
    fused = np.zeros(n, np.float64)
    for s in scores:
        rank = np.empty(n, np.float64)
        rank[np.argsort(-s, kind="stable")] = np.arange(n)
        fused += 1.0 / (k + rank)
    order: np.ndarray[Any, Any] = np.argsort(-fused, kind="stable")
    return order
