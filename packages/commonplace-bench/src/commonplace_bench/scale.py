"""Write throughput and recall latency of the embedded default at a given store size.

Run: ``python -m commonplace_bench.scale --sizes 10000 100000``. Every number is
the median of several runs in the same process; recall latency is reported
with the query embedding excluded (queries embedded beforehand and served
from a cache) and included. The machine may be shared, so the process's CPU
time per recall and per write is reported beside wall time.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from commonplace import Config, HashingEmbedder, ManualClock, Memory, Scope
from commonplace.embedders import Embedder, Vectors

_TOPICS = (
    "run",
    "tea",
    "book",
    "garden",
    "guitar",
    "train",
    "museum",
    "bread",
    "chess",
    "river",
    "market",
    "concert",
    "bike",
    "coffee",
    "painting",
    "lake",
    "forest",
)
_PLACES = ("Lisbon", "Porto", "Madrid", "Berlin", "Oslo", "Kyoto", "Lima", "Quito", "Accra")


def synthetic_turns(n: int, *, seed: int) -> list[str]:
    """Varied user turns that each become a note (no noise, few duplicates)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        topic, place = rng.choice(_TOPICS), rng.choice(_PLACES)
        out.append(
            f"I went to the {topic} {rng.choice(['club', 'shop', 'fair', 'class'])} "
            f"in {place} with friend number {i} and it cost {rng.randint(2, 300)} euros."
        )
    return out


class CachedQueries:
    """Wraps an embedder so pre-embedded queries cost a dictionary lookup."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._cache: dict[str, Vectors] = {}

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def warm(self, texts: Sequence[str]) -> None:
        for text, vector in zip(texts, self._inner.embed(list(texts))):
            self._cache[text] = vector

    def embed(self, texts: Sequence[str]) -> Vectors:
        if len(texts) == 1 and texts[0] in self._cache:
            return self._cache[texts[0]][None, :]
        return self._inner.embed(texts)


@dataclass(frozen=True)
class ScaleResult:
    notes: int
    write_turns_per_s: float
    recall_p50_ms: float
    recall_p95_ms: float
    recall_with_embed_p50_ms: float
    recall_cpu_p50_ms: float
    write_cpu_turns_per_s: float
    file_mib: float


def measure(
    size: int,
    *,
    folder: Path,
    queries: int = 200,
    batch: int = 500,
    seed: int = 1,
    model: Embedder | None = None,
    workers: int = 0,
) -> ScaleResult:
    """One run at ``size`` notes; ``model`` is the embedder (hashing when not given). With
    ``workers`` the turns go in through ``Memory.import_turns`` (the same batches, that
    many processes drafting the next batch's notes), else one ``write_many`` a batch."""
    embedder = CachedQueries(model or HashingEmbedder())
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=timezone.utc))
    path = folder / f"scale-{size}.db"
    turns = synthetic_turns(size, seed=seed)
    scope = Scope(user="bench")
    with Memory(
        f"sqlite:///{path}", embedder=embedder, clock=clock, config=Config(touch_on_recall=True)
    ) as memory:
        start, cpu = time.perf_counter(), _cpu()
        if workers:
            every = []
            for at in range(0, size, batch):
                clock.advance(minutes=30)
                every += [memory.turn(t, scope=scope) for t in turns[at : at + batch]]
            memory.import_turns(every, batch=batch, progress=False, workers=workers)
        else:
            for at in range(0, size, batch):
                clock.advance(minutes=30)
                memory.write_many([memory.turn(t, scope=scope) for t in turns[at : at + batch]])
        write_rate = size / (time.perf_counter() - start)
        write_cpu_rate = size / (_cpu() - cpu)
        rng = random.Random(seed + 1)
        asked = [
            f"what did I do at the {rng.choice(_TOPICS)} in {rng.choice(_PLACES)}?"
            for _ in range(queries)
        ]
        memory.recall(asked[0], scope=scope)  # load the vector cache once
        excluded: list[float] = []
        cpu_times: list[float] = []
        embedder.warm(asked)
        for q in asked:
            t, c = time.perf_counter(), time.process_time()
            memory.recall(q, scope=scope)
            excluded.append(time.perf_counter() - t)
            cpu_times.append(time.process_time() - c)
        included = []
        plain = Memory(f"sqlite:///{path}", clock=clock)
        try:
            plain.recall(asked[0], scope=scope)
            for q in asked:
                t = time.perf_counter()
                plain.recall(q + " ", scope=scope)
                included.append(time.perf_counter() - t)
        finally:
            plain.close()
    size_mib = sum(p.stat().st_size for p in folder.glob(f"scale-{size}.db*")) / 2**20
    return ScaleResult(
        size,
        write_rate,
        _ms(statistics.median(excluded)),
        _ms(float(np.percentile(excluded, 95))),
        _ms(statistics.median(included)),
        _ms(statistics.median(cpu_times)),
        write_cpu_rate,
        size_mib,
    )


def _cpu() -> float:
    """This process's CPU seconds and its finished children's (an import's workers)."""
    times = os.times()
    return time.process_time() + times.children_user + times.children_system


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--runs", type=int, default=3, help="repeat and take medians")
    parser.add_argument(
        "--embedder",
        choices=("hashing", "default"),
        default="hashing",
        help="hashing keeps the model's cost out of the write rate; default is MiniLM",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="import through Memory.import_turns with this many drafting processes",
    )
    args = parser.parse_args(argv)
    model: Embedder | None = None
    if args.embedder == "default":
        from commonplace.embedders import MiniLMEmbedder

        model = MiniLMEmbedder()
    print(
        "| notes | write turns/s (wall / CPU) | recall p50 ms (embed excluded) | p95 ms | "
        "p50 ms (embed included) | recall p50 CPU ms | file MiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    fields = (
        "write_turns_per_s",
        "write_cpu_turns_per_s",
        "recall_p50_ms",
        "recall_p95_ms",
        "recall_with_embed_p50_ms",
        "recall_cpu_p50_ms",
        "file_mib",
    )
    for size in args.sizes:
        results = []
        for run in range(args.runs):
            with tempfile.TemporaryDirectory() as folder:
                results.append(
                    measure(
                        size, folder=Path(folder), seed=run + 1, model=model, workers=args.workers
                    )
                )
        med = {f: statistics.median(getattr(r, f) for r in results) for f in fields}
        print(
            f"| {size:,} | {med['write_turns_per_s']:,.0f} / {med['write_cpu_turns_per_s']:,.0f}"
            f" | {med['recall_p50_ms']:.2f} | {med['recall_p95_ms']:.2f} | "
            f"{med['recall_with_embed_p50_ms']:.2f} | {med['recall_cpu_p50_ms']:.2f} | "
            f"{med['file_mib']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
