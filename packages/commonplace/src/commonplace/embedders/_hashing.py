"""The default embedder: deterministic feature hashing, no model, no download.

A text becomes a bag of features (stemmed words, word pairs, and character
trigrams of each word, which carry morphology and typos) hashed with CRC-32 into
``dim`` signed buckets, weighted sub-linearly, with common function words damped.
It knows nothing of synonyms: its strength is exact and near-exact wording, which
the hybrid keyword search and the note writer's normalised phrasing lean on.
``docs/embedders.md`` measures it against all-MiniLM-L6-v2.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from .._text import STOPWORDS, WORD, stem
from .._validate import checked_dim
from ._protocol import Vectors

# Fewer buckets than this and unrelated texts share most of their features.
_MIN_DIM = 16


class HashingEmbedder:
    """Feature-hashing embedder; the default because it needs nothing but numpy.

    ``dim`` is the number of buckets, from 16 to ``MAX_EMBEDDER_DIM`` (65,536).
    """

    def __init__(self, *, dim: int = 256) -> None:
        self._dim = checked_dim("HashingEmbedder(dim=...)", dim, low=_MIN_DIM)
        self._buckets: dict[str, tuple[int, float]] = {}

    @property
    def name(self) -> str:
        return f"commonplace-hashing-v1-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in self._features(text).items():
                index, sign = self._bucket(feature)
                out[row, index] += sign * weight
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.asarray(out / norms, dtype=np.float32)

    def _features(self, text: str) -> dict[str, float]:
        words = [w.replace("’", "'") for w in WORD.findall(text.lower())]
        counts: defaultdict[str, float] = defaultdict(float)
        content = []
        for word in words:
            base = stem(word)
            damp = 0.25 if word in STOPWORDS else 1.0
            counts["w:" + base] += damp
            if damp == 1.0:
                content.append(base)
                padded = f"<{word}>"
                for i in range(len(padded) - 2):
                    counts["c:" + padded[i : i + 3]] += 0.35
        for left, right in itertools.pairwise(content):
            counts["b:" + left + " " + right] += 0.7
        # sub-linear term frequency keeps a repeated word from dominating
        return {f: 1.0 + math.log(c) if c >= 1 else c for f, c in counts.items()}

    def _bucket(self, feature: str) -> tuple[int, float]:
        cached = self._buckets.get(feature)
        if cached is None:
            h = zlib.crc32(feature.encode("utf-8", "surrogatepass"))
            cached = (h % self._dim, 1.0 if (h >> 31) & 1 else -1.0)
            if len(self._buckets) < 500_000:
                self._buckets[feature] = cached
        return cached
