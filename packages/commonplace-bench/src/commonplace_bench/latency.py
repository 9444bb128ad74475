"""Recall latency against store size: commonplace, exact numpy top-k and a bare HNSW index,
all measured in one run on the same vectors.

Run: ``OPENBLAS_NUM_THREADS=1 python -m commonplace_bench.latency --sizes 10000 100000
1000000 --out docs/benchmarks/latency``. For each size a store is built straight through
the backend (synthetic notes, hashing vectors, one scope: the store-only path of the
scaling workload), then the three systems take turns query by query (so background load
hits them alike), with the query embedding excluded:

* commonplace: ``Memory.recall`` with the defaults (hybrid search over the HNSW graph the
  store keeps for a scope this large, rerank, flags, the 1,500-token context);
* numpy exact: the product of the query with every vector and a top-10 partition;
* bare HNSW: a usearch index over the same vectors, built with the store's parameters,
  asked for the top 10.

Reported: p50 and p95 wall time, CPU time at the median, the build times (the store's
graph is built by its first recall), recall@10 of the bare index and of the store's own
vector search against exact search (a found vector counts when its similarity reaches the
exact 10th best: hashed notes tie often), resident memory beyond the vectors per note, and
the file size per note. ``--out`` writes ``latency.json`` and, with matplotlib,
``latency.png``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from usearch.index import Index

from commonplace import Config, HashingEmbedder, ManualClock, Memory

from .scale import CachedQueries, synthetic_turns
from .workloads.scaling import SCOPE, START, _build_store_only, _queries, rss_bytes

# the store's own graph parameters (commonplace.stores keeps them private): the candidates
# a search looks at grow with the square root of the graph's size past 250k, up to 1,024
_CONNECTIVITY, _EXPANSION_ADD = 16, 64


def _search_width(size: int) -> int:
    return min(1024, max(256, int(256 * math.sqrt(size / 250_000))))


SYSTEMS = ("commonplace", "numpy exact", "bare HNSW")


def _clocked(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _recall_at_10(found: Sequence[float], exact_tenth: float) -> float:
    return min(1.0, sum(1 for s in found if s >= exact_tenth - 1e-5) / 10)


def measure(size: int, *, folder: Path, queries: int, seed: int = 1) -> dict[str, Any]:
    turns = synthetic_turns(size, seed=seed)
    asked = _queries(queries, seed + 1)
    hashing = HashingEmbedder()
    cached = CachedQueries(hashing)
    path = folder / "latency.db"
    gc.collect()
    rss0 = rss_bytes()
    out: dict[str, Any] = {"notes": size, "dim": hashing.dim}
    with Memory(
        f"sqlite:///{path}",
        embedder=cached,
        clock=ManualClock(START),
        config=Config(touch_on_recall=False),
    ) as memory:
        build, _ = _clocked(lambda: _build_store_only(memory, turns, hashing))
        graph, _ = _clocked(lambda: memory.recall("warm up the vector cache", scope=SCOPE))
        gc.collect()
        overhead = (rss_bytes() - rss0) / size - hashing.dim * 4
        matrix = np.ascontiguousarray(
            np.vstack([hashing.embed(turns[i : i + 10_000]) for i in range(0, size, 10_000)])
        )
        bare = Index(
            ndim=hashing.dim,
            metric="ip",
            dtype="f32",
            connectivity=_CONNECTIVITY,
            expansion_add=_EXPANSION_ADD,
            expansion_search=_search_width(size),
        )
        bare_build, _ = _clocked(lambda: bare.add(np.arange(size, dtype=np.uint64), matrix))
        cached.warm(asked)
        vectors = {q: cached.embed([q])[0] for q in asked}
        samples: dict[str, list[tuple[float, float]]] = {s: [] for s in SYSTEMS}
        quality: dict[str, list[float]] = {"bare HNSW": [], "commonplace": []}
        for q in asked:
            vector = vectors[q]
            samples["commonplace"].append(_clocked(partial(memory.recall, q, scope=SCOPE)))
            samples["numpy exact"].append(_clocked(partial(_exact, matrix, vector)))
            samples["bare HNSW"].append(_clocked(partial(bare.search, vector, 10, threads=1)))
            sims = matrix @ vector
            tenth = float(np.partition(-sims, 9)[9]) * -1
            found = bare.search(vector, 10, threads=1)
            quality["bare HNSW"].append(
                _recall_at_10((1.0 - np.asarray(found.distances)).tolist(), tenth)
            )
            hits = memory.store.search(SCOPE, vector, text=None, limit=10)
            quality["commonplace"].append(_recall_at_10([h.similarity for h in hits], tenth))
    disk = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    for system in SYSTEMS:
        wall = sorted(1000 * w for w, _ in samples[system])
        cpu = sorted(1000 * c for _, c in samples[system])
        out[system] = {
            "p50_ms": statistics.median(wall),
            "p95_ms": float(np.percentile(wall, 95)),
            "cpu_p50_ms": statistics.median(cpu),
        }
    out["commonplace"].update(
        {
            "store_build_s": build,
            "graph_build_s": graph,
            "recall_at_10": statistics.mean(quality["commonplace"]),
            "ram_overhead_bytes_per_note": overhead,
            "disk_bytes_per_note": disk / size,
        }
    )
    out["bare HNSW"].update(
        {"build_s": bare_build, "recall_at_10": statistics.mean(quality["bare HNSW"])}
    )
    out["vs_exact_p50"] = out["commonplace"]["p50_ms"] / out["numpy exact"]["p50_ms"]
    return out


def _exact(matrix: Any, vector: Any) -> Any:
    sims = matrix @ vector
    top = np.argpartition(-sims, 10)[:10]
    return top[np.argsort(-sims[top])]


def table(results: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| notes | commonplace p50 / p95 ms (CPU p50) | numpy exact p50 / p95 ms (CPU p50) "
        "| bare HNSW p50 / p95 ms | commonplace / exact | recall@10 store / bare HNSW "
        "| graph build s (store / bare) | RAM beyond vectors B/note | file KiB/note |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        cp, ex, hn = r["commonplace"], r["numpy exact"], r["bare HNSW"]
        lines.append(
            f"| {r['notes']:,} | {cp['p50_ms']:.2f} / {cp['p95_ms']:.2f} ({cp['cpu_p50_ms']:.2f})"
            f" | {ex['p50_ms']:.2f} / {ex['p95_ms']:.2f} ({ex['cpu_p50_ms']:.2f})"
            f" | {hn['p50_ms']:.3f} / {hn['p95_ms']:.3f} | {r['vs_exact_p50']:.2f}x"
            f" | {cp['recall_at_10']:.3f} / {hn['recall_at_10']:.3f}"
            f" | {cp['graph_build_s']:.1f} / {hn['build_s']:.1f}"
            f" | {cp['ram_overhead_bytes_per_note']:,.0f}"
            f" | {cp['disk_bytes_per_note'] / 1024:.2f} |"
        )
    return "\n".join(lines)


def plot(results: Sequence[dict[str, Any]], path: Path) -> bool:
    """Latency against size, log-log; False (and nothing drawn) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    sizes = [r["notes"] for r in results]
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    for system, colour in zip(SYSTEMS, ("#1b7837", "#762a83", "#2166ac")):
        ax.plot(sizes, [r[system]["p50_ms"] for r in results], "o-", color=colour, label=system)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("notes in the scope")
    ax.set_ylabel("recall p50, ms (query embedding excluded)")
    ax.set_title("Recall latency against store size, one run")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.text(0.01, 0.01, "2 cores, OPENBLAS_NUM_THREADS=1, hashing vectors (256 dims)", size=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m commonplace_bench.latency")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, help="folder for latency.json and latency.png")
    args = parser.parse_args(argv)
    results = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="cp-latency-") as folder:
            results.append(measure(size, folder=Path(folder), queries=args.queries))
        print(table(results[-1:]).splitlines()[-1], flush=True)
    print(table(results))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "latency.json").write_text(json.dumps(results, indent=1), "utf-8")
        if plot(results, args.out / "latency.png"):
            print(f"wrote {args.out / 'latency.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
