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
import numpy.typing as npt

from .._text import STOPWORDS, WORD, stem
from .._validate import checked_dim
from ._protocol import Vectors

# Fewer buckets than this and unrelated texts share most of their features.
_MIN_DIM = 16
# Bounds of the per-embedder caches: feature -> bucket and word -> its features. Filled
# first come, first served, they soon hold a text's frequent words and their features,
# which is where the time goes: on 100k synthetic turns and LoCoMo's dev split these
# bounds embedded as fast as bounds eight times larger (24k texts/s) in 19 MiB instead of
# 64 (the larger ones grew with every new number and name; in a 100k-note store that was
# most of the process's memory beyond the vectors).
_CACHED_FEATURES = 65_536
_CACHED_WORDS = 16_384
# NumPy 2 adds a Python float to a float32 in float32 (NEP 50); NumPy 1 added it in float64
# and rounded the sum. The vectors must not depend on how they are summed, so the batched
# sum below is used only where it rounds as the one-feature-at-a-time sum always did.
_FLOAT32_SCALAR_SUMS = isinstance(np.float32(0) + 0.1, np.float32)


def _accumulate(
    flat: Vectors, cells: npt.NDArray[np.intp], values: npt.NDArray[np.float64]
) -> None:
    """``flat[cell] += value`` for each pair in order, each sum rounded to float32."""
    if _FLOAT32_SCALAR_SUMS:
        # one unbuffered pass: repeated cells are added in order, each in float32
        np.add.at(flat, cells, values.astype(np.float32))
        return
    for cell, value in zip(cells.tolist(), values.tolist()):  # pragma: no cover - NumPy 1
        flat[cell] += value


class HashingEmbedder:
    """Feature-hashing embedder; the default because it needs nothing but numpy.

    ``dim`` is the number of buckets, from 16 to ``MAX_EMBEDDER_DIM`` (65,536).
    """

    def __init__(self, *, dim: int = 256) -> None:
        self._dim = checked_dim("HashingEmbedder(dim=...)", dim, low=_MIN_DIM)
        self._codes: dict[str, int] = {}
        self._words: dict[str, tuple[str, str, tuple[str, ...] | None]] = {}

    @property
    def name(self) -> str:
        return f"commonplace-hashing-v1-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        rows: list[int] = []
        codes: list[int] = []  # a feature's bucket and sign, in the order features are added
        weights: list[float] = []
        known = self._codes
        for row, text in enumerate(texts):
            features = self._features(text)
            found = [known.get(f, -1) for f in features]
            if -1 in found:
                found = [c if c >= 0 else self._code(f) for f, c in zip(features, found)]
            rows += [row] * len(found)
            codes += found
            weights += features.values()
        code = np.asarray(codes, np.intp)
        signs = np.where(code & 1, 1.0, -1.0)
        cells = np.asarray(rows, np.intp) * self._dim + (code >> 1)
        # the same products as sign * weight one at a time (a sign is exactly +-1)
        _accumulate(out.reshape(-1), cells, signs * np.asarray(weights, np.float64))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.asarray(out / norms, dtype=np.float32)

    def _features(self, text: str) -> dict[str, float]:
        counts: defaultdict[str, float] = defaultdict(float)
        content = []
        for word in WORD.findall(text.lower()):
            key, base, trigrams = self._word(word)
            if trigrams is None:  # a function word, damped
                counts[key] += 0.25
                continue
            counts[key] += 1.0
            content.append(base)
            for trigram in trigrams:
                counts[trigram] += 0.35
        for left, right in itertools.pairwise(content):
            counts["b:" + left + " " + right] += 0.7
        # sub-linear term frequency keeps a repeated word from dominating
        return {f: 1.0 + math.log(c) if c >= 1 else c for f, c in counts.items()}

    def _word(self, word: str) -> tuple[str, str, tuple[str, ...] | None]:
        """A lower-cased word's stem feature, its stem, and its trigram features (None for
        a stop word, which has none); a text's words are mostly words seen before."""
        cached = self._words.get(word)
        if cached is None:
            plain = word.replace("’", "'")
            base = stem(plain)
            trigrams = None
            if plain not in STOPWORDS:
                padded = f"<{plain}>"
                trigrams = tuple("c:" + padded[i : i + 3] for i in range(len(padded) - 2))
            cached = ("w:" + base, base, trigrams)
            if len(self._words) < _CACHED_WORDS:
                self._words[word] = cached
        return cached

    def _code(self, feature: str) -> int:
        """A feature's bucket and sign as one int: ``bucket << 1 | (sign is +1)``."""
        cached = self._codes.get(feature)
        if cached is None:
            h = zlib.crc32(feature.encode("utf-8", "surrogatepass"))
            cached = (h % self._dim) << 1 | (h >> 31) & 1
            if len(self._codes) < _CACHED_FEATURES:
                self._codes[feature] = cached
        return cached
