"""The default embedder: deterministic across processes, unit vectors, lexical signal."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commonplace import HashingEmbedder
from commonplace._text import STOPWORDS, WORD
from commonplace.embedders import _hashing
from commonplace.embedders._hashing import stem


def test_vectors_are_unit_length_and_deterministic_across_processes() -> None:
    vectors = HashingEmbedder().embed(["I moved to Lisbon", "", "🙂"])
    assert vectors.shape == (3, 256) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[0]), 1.0)
    assert not np.any(vectors[1])  # nothing to embed is the zero vector
    code = (
        "from commonplace import HashingEmbedder;"
        "print(HashingEmbedder().embed(['I moved to Lisbon'])[0][:8].tolist())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin"},
    )
    assert other.returncode == 0, other.stderr
    assert np.allclose(eval(other.stdout), vectors[0][:8])


def test_shared_words_and_word_forms_score_higher_than_unrelated_text() -> None:
    e = HashingEmbedder()
    a, b, c = e.embed(
        [
            "The user lives in Lisbon",
            "where does she live? Lisbon?",
            "favourite pizza topping is anchovies",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.2


def test_the_light_stemmer_folds_common_forms() -> None:
    assert stem("live") == stem("lives") == stem("lived") == stem("living")
    assert stem("move") == stem("moved") == stem("moving")
    assert stem("cities") == stem("city")


def test_the_vectors_are_frozen_under_their_pinned_name() -> None:
    """Stores pin the embedder by name: if this fails, the vectors changed, so the name must
    change too (commonplace-hashing-v2-...) and this checksum with it."""
    import hashlib

    embedder = HashingEmbedder()
    vectors = embedder.embed(["The user moved to Porto with Joana.", "what is my gym locker code?"])
    digest = hashlib.sha256(np.round(vectors, 5).tobytes()).hexdigest()
    assert embedder.name == "commonplace-hashing-v1-256"
    assert digest == "263d2dd0d8bfe3615837411ce3e96db97a094beeda4b30d359c99a3c660a773a"


def _one_feature_at_a_time(embedder: HashingEmbedder, texts: list[str]) -> np.ndarray:
    """The embedder's sum as first written: each feature added to its bucket in turn."""
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    for row, text in enumerate(texts):
        words = [w.replace("’", "'") for w in WORD.findall(text.lower())]
        counts: dict[str, float] = {}
        content = []
        for word in words:
            base = stem(word)
            damp = 0.25 if word in STOPWORDS else 1.0
            counts["w:" + base] = counts.get("w:" + base, 0.0) + damp
            if damp == 1.0:
                content.append(base)
                padded = f"<{word}>"
                for i in range(len(padded) - 2):
                    key = "c:" + padded[i : i + 3]
                    counts[key] = counts.get(key, 0.0) + 0.35
        for left, right in itertools.pairwise(content):
            key = "b:" + left + " " + right
            counts[key] = counts.get(key, 0.0) + 0.7
        for feature, c in counts.items():
            weight = 1.0 + math.log(c) if c >= 1 else c
            h = zlib.crc32(feature.encode("utf-8", "surrogatepass"))
            out[row, h % embedder.dim] += (1.0 if (h >> 31) & 1 else -1.0) * weight
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(out / norms, dtype=np.float32)


@settings(derandomize=True, database=None, deadline=None, max_examples=200)
@given(
    texts=st.lists(
        st.lists(
            st.sampled_from(
                [
                    "I",
                    "the",
                    "moved",
                    "moving",
                    "Lisbon",
                    "lisbon",
                    "don’t",
                    "don't",
                    "aaa",
                    "café",
                    "ſtop",
                    "K",
                    "😀",
                    "to",
                    "to",
                    "Berlin",
                    "cost",
                    "300",
                    "euros",
                    "x",
                ]
            )
            | st.text(max_size=8),
            max_size=40,
        ).map(" ".join),
        min_size=1,
        max_size=12,
    ),
    dim=st.sampled_from([16, 64, 256]),
)
def test_vectors_are_bit_for_bit_those_of_the_one_feature_at_a_time_sum(
    texts: list[str], dim: int
) -> None:
    embedder = HashingEmbedder(dim=dim)
    first = embedder.embed(texts)
    again = embedder.embed(texts)  # from the word and bucket caches this time
    expected = _one_feature_at_a_time(embedder, texts)
    assert first.tobytes() == expected.tobytes()
    assert again.tobytes() == expected.tobytes()


def test_the_word_and_feature_caches_stop_at_their_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_hashing, "_CACHED_WORDS", 10)
    monkeypatch.setattr(_hashing, "_CACHED_FEATURES", 50)
    embedder = HashingEmbedder()
    texts = [" ".join(f"word{i}x{j}" for j in range(30)) for i in range(5)]
    vectors = embedder.embed(texts)
    assert len(embedder._words) == 10 and len(embedder._codes) == 50
    # words and features past the bounds are computed each time, to the same vectors
    assert embedder.embed(texts).tobytes() == vectors.tobytes()
    assert vectors.tobytes() == _one_feature_at_a_time(embedder, texts).tobytes()
