"""Smoke test of the embedder benchmark: tiny set, hashing embedder only, no extras.

It guards the benchmark's plumbing (set generation, ranking, scoring, the throughput
texts, batching, install sizes, the generated doc and the hand-written part it keeps)
without running the models, and checks that hashing beats a chance-level baseline on
lexical queries, which would fail if ranking or the relevant-note bookkeeping broke.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from commonplace import HashingEmbedder
from commonplace.embedders import Vectors
from commonplace_bench.embedder_quality import (
    DEFAULT,
    HASHING,
    MARKER,
    Candidate,
    evaluate,
    hand_written_part,
    install_megabytes,
    long_turns,
    measure_speed,
    render_doc,
    short_notes,
)
from commonplace_bench.metrics import OVERALL, EmbedderResult
from commonplace_bench.models import length_batches
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


def test_throughput_texts_are_short_notes_and_long_turns() -> None:
    retrieval_set = _tiny_set()
    short, long = short_notes(retrieval_set), long_turns(retrieval_set)
    assert len(short) == 512 and len(long) == 48
    assert all(len(t.split()) <= 15 for t in short)
    assert 12 <= sum(len(t.split()) for t in short) / len(short) <= 15
    assert all(len(t.split()) >= 60 for t in long)
    assert short == short_notes(retrieval_set) and long == long_turns(retrieval_set)


def test_length_batches_cover_every_text_once_within_the_caps() -> None:
    lengths = [5, 300, 12, 12, 40, 7, 256, 3, 90, 12]
    batches = list(length_batches(lengths, max_texts=3, max_tokens=100))
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(flat)
    for batch in batches:
        assert len(batch) <= 3
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= 100


def test_install_size_counts_only_what_the_core_does_not_need() -> None:
    assert install_megabytes(()) == 0.0
    assert install_megabytes(("numpy",)) == 0.0  # the core needs it anyway
    assert install_megabytes(("no-such-distribution-here",)) is None
    onnx = install_megabytes(("onnxruntime",))
    assert onnx is not None and onnx > 5  # a native runtime, tens of MB


def test_doc_keeps_its_hand_written_part(tmp_path: Path) -> None:
    retrieval_set = _tiny_set()
    hashing = HashingEmbedder()
    (result,) = evaluate([(HASHING, hashing)], retrieval_set, timing_runs=1, min_seconds=0.0)
    (speed,) = measure_speed([hashing], retrieval_set, runs=1, min_seconds=0.0)
    chosen = dataclasses.replace(result, label=DEFAULT, name="stand-in")
    candidates = [
        Candidate(result=result, speed=speed, install_mb=0.0),
        Candidate(result=chosen, speed=speed, install_mb=134.0),
    ]
    doc = tmp_path / "embedders.md"
    doc.write_text(f"# old generated text\n\n{MARKER}\nkept by hand\n\n```python\nx = 1\n```\n")
    tail = hand_written_part(doc)
    assert tail.startswith(MARKER) and "kept by hand" in tail
    text = render_doc(candidates, retrieval_set, runs=1, hand_written=tail)
    assert "old generated text" not in text
    assert text.endswith(f"{MARKER}\nkept by hand\n\n```python\nx = 1\n```\n")
    assert text.index("## Why this default") < text.index(MARKER)
    assert f"| {DEFAULT} | `stand-in` |" in text and "| 134 |" in text
    assert hand_written_part(tmp_path / "missing.md") == ""
