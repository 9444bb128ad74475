"""Smoke test of the embedder benchmark: tiny set, hashing embedder only, no extras.

It guards the benchmark's plumbing (set generation, ranking, scoring) without the
optional model packages, and checks that hashing beats a chance-level baseline on
lexical queries, which would fail if ranking or the relevant-note bookkeeping broke.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from commonplace import HashingEmbedder
from commonplace.embedders import Vectors
from commonplace_bench.embedder_quality import evaluate
from commonplace_bench.metrics import OVERALL, EmbedderResult
from commonplace_bench.retrieval_set import GROUPS, RetrievalSet, build_retrieval_set

FACTS = 10
NOTES = 60


class RandomEmbedder:
    """Unit vectors unrelated to the text: ranks notes at random, i.e. chance level."""

    def __init__(self, *, seed: int, dim: int = 64) -> None:
        self._rng = np.random.default_rng(seed)
        self._dim = dim

    @property
    def name(self) -> str:
        return "random"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        vectors = self._rng.standard_normal((len(texts), self._dim)).astype(np.float32)
        unit: Vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return unit


def _tiny_set() -> RetrievalSet:
    return build_retrieval_set(seed=7, facts=FACTS, notes=NOTES)


def _run(embedder: HashingEmbedder | RandomEmbedder, retrieval_set: RetrievalSet) -> EmbedderResult:
    (result,) = evaluate([("x", embedder)], retrieval_set, timing_runs=1, min_seconds=0.0)
    return result


def test_tiny_set_is_seeded_and_well_formed() -> None:
    retrieval_set = _tiny_set()
    assert retrieval_set == _tiny_set()
    assert len(retrieval_set.notes) == NOTES
    assert len(set(retrieval_set.notes)) == NOTES
    assert len(retrieval_set.queries) == 3 * FACTS
    assert all(0 <= q.relevant < NOTES for q in retrieval_set.queries)
    assert build_retrieval_set(seed=8, facts=FACTS, notes=NOTES) != retrieval_set


def test_result_structure() -> None:
    result = _run(HashingEmbedder(), _tiny_set())
    assert result.name == "commonplace-hashing-v1-256"
    assert result.dim == 256
    assert set(result.scores) == {*GROUPS, OVERALL}
    assert all(result.scores[group].queries == FACTS for group in GROUPS)
    assert result.scores[OVERALL].queries == 3 * FACTS
    for scores in result.scores.values():
        assert 0.0 <= scores.recall_at_1 <= scores.recall_at_5 <= 1.0
        assert scores.recall_at_1 <= scores.mrr <= 1.0
    assert isinstance(result.texts_per_second, float)


def test_hashing_beats_random_on_lexical_queries() -> None:
    retrieval_set = _tiny_set()
    hashing = _run(HashingEmbedder(), retrieval_set).scores["lexical"].recall_at_5
    random_runs = [_run(RandomEmbedder(seed=s), retrieval_set) for s in range(5)]
    chance = float(np.mean([r.scores["lexical"].recall_at_5 for r in random_runs]))
    assert hashing > chance, (hashing, chance)
