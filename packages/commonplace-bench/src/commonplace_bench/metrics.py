"""Rank-based retrieval metrics and a throughput timer, kept free of any model.

Ranks are computed against every note in the set (no approximate index), and ties
count against the embedder: a relevant note that scores the same as another is
ranked after it. That matters for hashing, where short texts can collide exactly,
and keeps a constant embedder from looking perfect.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from commonplace.embedders import Embedder, Vectors

__all__ = [
    "EmbedderResult",
    "OVERALL",
    "Scores",
    "Throughput",
    "embed_unit",
    "interleaved_throughput",
    "ranks",
    "score",
]


@dataclass(frozen=True, slots=True)
class Scores:
    """Recall@1, recall@5 and mean reciprocal rank over ``queries`` queries."""

    queries: int
    recall_at_1: float
    recall_at_5: float
    mrr: float


OVERALL = "overall"


@dataclass(frozen=True, slots=True)
class EmbedderResult:
    """One embedder's scores per group (plus ``overall``) and its warm throughput."""

    label: str
    name: str
    dim: int
    scores: dict[str, Scores]
    texts_per_second: float
    texts_per_cpu_second: float
    checks: tuple[str, ...] = ()  # what was verified about the model before scoring


def embed_unit(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """Embed and re-normalise, so a sloppy embedder cannot skew cosine ranking."""
    vectors = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
    if vectors.shape != (len(texts), embedder.dim):
        raise ValueError(
            f"{embedder.name} returned shape {vectors.shape}, expected {(len(texts), embedder.dim)}"
        )
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


def ranks(query_vectors: Vectors, note_vectors: Vectors, relevant: Sequence[int]) -> list[int]:
    """1-based rank of each query's relevant note by cosine, ties ranked pessimistically."""
    sims = query_vectors @ note_vectors.T
    out = []
    for row, target in enumerate(relevant):
        target_score = sims[row, target]
        at_least_as_good = int(np.sum(sims[row] >= target_score)) - 1  # minus the target
        out.append(1 + at_least_as_good)
    return out


def score(rank_list: Sequence[int]) -> Scores:
    """Aggregate ranks; an empty list scores zero rather than dividing by zero."""
    n = len(rank_list)
    if n == 0:
        return Scores(queries=0, recall_at_1=0.0, recall_at_5=0.0, mrr=0.0)
    return Scores(
        queries=n,
        recall_at_1=sum(r <= 1 for r in rank_list) / n,
        recall_at_5=sum(r <= 5 for r in rank_list) / n,
        mrr=sum(1.0 / r for r in rank_list) / n,
    )


@dataclass(frozen=True, slots=True)
class Throughput:
    """Texts per wall-clock second and per CPU second (all threads of this process)."""

    wall: float
    cpu: float


def interleaved_throughput(
    embedders: Sequence[Embedder],
    texts: Sequence[str],
    *,
    runs: int = 3,
    min_seconds: float = 1.0,
) -> list[Throughput]:
    """Texts per second for each embedder: the median of ``runs`` timed runs.

    Runs go round-robin (run 1 of every embedder, then run 2 ...), so a burst of
    background load on a shared 2-core VM hits all embedders alike. Wall-clock time
    is what a user waits for, but it swells whenever other processes hold the cores;
    CPU time (this process, all threads) barely moves with such load, so both are
    reported. A run repeats the whole batch until it lasts about ``min_seconds``,
    because one hashing pass over a few hundred texts takes only milliseconds. Each
    embedder embeds ``texts`` once untimed first, so runtimes are warm (ONNX session
    initialised, hashing's bucket cache filled): a long-running agent's steady state.
    """
    if runs < 1:
        raise ValueError("runs must be at least 1")
    batch = list(texts)
    repeats = []
    for embedder in embedders:
        start = time.perf_counter()
        embedder.embed(batch)
        one_pass = max(time.perf_counter() - start, 1e-6)
        repeats.append(max(1, math.ceil(min_seconds / one_pass)))
    wall: list[list[float]] = [[] for _ in embedders]
    cpu: list[list[float]] = [[] for _ in embedders]
    for _ in range(runs):
        for index, (embedder, count) in enumerate(zip(embedders, repeats, strict=True)):
            start, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(count):
                embedder.embed(batch)
            cpu[index].append(time.process_time() - start_cpu)
            wall[index].append(time.perf_counter() - start)
    return [
        Throughput(
            wall=count * len(batch) / max(statistics.median(wall_times), 1e-9),
            cpu=count * len(batch) / max(statistics.median(cpu_times), 1e-9),
        )
        for count, wall_times, cpu_times in zip(repeats, wall, cpu, strict=True)
    ]
