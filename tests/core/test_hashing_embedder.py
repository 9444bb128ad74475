"""The default embedder: deterministic across processes, unit vectors, lexical signal."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from commonplace import HashingEmbedder
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
