"""Workload 5: scale of the embedded default, next to brute-force RAG in the same process.

Each store size is measured in a fresh subprocess (so resident memory is its own):
``python -m commonplace_bench.workloads.scaling --size N --out result.json``.

* commonplace, full path: N synthetic user turns (each becomes a note) written with
  ``Memory.write_many`` in batches of 500 through the default note writer and the
  hashing embedder into a SQLite file (``python -m commonplace_bench.scale --embedder
  default`` measures the MiniLM default); write throughput, build time, disk.
* commonplace, store only (``--store-only``, for sizes the full path would take too
  long to build): notes go straight to the SQLite backend with ``apply`` in
  batches of 10,000, skipping the note writer; the read path is the full recall.
* plain RAG: the same turns' hashing vectors in one numpy matrix, exact top-10.
* LangGraph ``InMemoryStore`` with an index, at sizes up to ``--langgraph-max`` (its
  search is slow, so only the first 50 queries are timed).

Recall latency: ``queries`` distinct questions, p50 and p95, with the query embedding
excluded (vectors computed beforehand and served from a cache) and included; the
systems take turns query by query, so background load hits them alike, and each
latency is also reported as a ratio to plain RAG's. Resident memory is the growth of
RSS from before the build to after the first recall (which loads the vector cache),
per note; "overhead" subtracts the vectors themselves (dim x 4 bytes).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from commonplace import (
    Config,
    Episode,
    HashingEmbedder,
    Kind,
    ManualClock,
    Memory,
    Record,
    Role,
    Scope,
    Tags,
    Tier,
)
from commonplace.stores import TurnWrite, WriteBatch

from ..scale import CachedQueries, synthetic_turns

SCOPE = Scope(user="bench")
#: InMemoryStore re-reads every vector per search (hundreds of ms at 10k): fewer queries
LANGGRAPH_QUERIES = 50
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
_TOPICS = ("tea", "book", "garden", "guitar", "train", "museum", "bread", "chess", "river")
_PLACES = ("Lisbon", "Porto", "Madrid", "Berlin", "Oslo", "Kyoto", "Lima", "Quito", "Accra")


def rss_bytes() -> int:
    """Resident set size of this process, from /proc (0 where there is none)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"what did I do at the {rng.choice(_TOPICS)} in {rng.choice(_PLACES)} (#{i})?"
        for i in range(n)
    ]


def _build_full(memory: Memory, turns: Sequence[str], clock: ManualClock) -> None:
    for at in range(0, len(turns), 500):
        clock.advance(minutes=30)
        memory.write_many([memory.turn(t, scope=SCOPE) for t in turns[at : at + 500]])


def _build_store_only(memory: Memory, turns: Sequence[str], embedder: HashingEmbedder) -> None:
    backend = memory.store
    for start in range(0, len(turns), 10_000):
        chunk = turns[start : start + 10_000]
        at = START + timedelta(minutes=start)
        writes = []
        for offset, text in enumerate(chunk):
            n = start + offset
            episode = Episode(f"ep_{n:024d}", SCOPE, Role.USER, text, at)
            note = Record(
                id=f"nt_{n:024d}",
                kind=Kind.NOTE,
                scope=SCOPE,
                text=text,
                tags=Tags(),
                provenance=(episode.id,),
                created_at=at,
                last_access=at,
                tier=Tier.WARM,
            )
            writes.append(TurnWrite(episode, note))
        backend.apply(WriteBatch(writes, embedder.embed(chunk)))


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _pcts(samples: list[float]) -> dict[str, float]:
    ms = sorted(1000 * s for s in samples)
    return {"p50": statistics.median(ms), "p95": float(np.percentile(ms, 95))}


def measure(
    size: int,
    *,
    folder: Path,
    queries: int,
    store_only: bool,
    langgraph_max: int,
    seed: int = 1,
) -> dict[str, Any]:
    turns = synthetic_turns(size, seed=seed)
    asked = _queries(queries, seed + 1)
    hashing = HashingEmbedder()
    cached = CachedQueries(hashing)
    path = folder / "scale.db"
    clock = ManualClock(START)
    with Memory("sqlite:///:memory:", embedder=hashing, clock=clock) as warm:
        # load what every store loads once (the tokenizer, the SQLite module) before
        # the memory baseline, so per-note figures are the store's own
        warm.write("I went to the tea club in Lisbon with a friend.", scope=SCOPE)
        warm.recall("tea in Lisbon", scope=SCOPE)
    gc.collect()
    rss0 = rss_bytes()
    out: dict[str, Any] = {"notes": size, "store_only": store_only, "dim": hashing.dim}
    memory = Memory(
        f"sqlite:///{path}", embedder=cached, clock=clock, config=Config(touch_on_recall=False)
    )
    plain = Memory(f"sqlite:///{path}", clock=clock, config=Config(touch_on_recall=False))
    try:
        if store_only:
            build = _timed(lambda: _build_store_only(memory, turns, hashing))
        else:
            build = _timed(lambda: _build_full(memory, turns, clock))
        first = _timed(lambda: memory.recall("warm up the vector cache", scope=SCOPE))
        gc.collect()
        rss1 = rss_bytes()
        db = sqlite3.connect(path)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        disk = sum(p.stat().st_size for p in folder.glob("scale.db*"))
        out["commonplace"] = {
            "build_s": build,
            "write_per_s": size / build,
            "first_recall_s": first,
            "disk_bytes_per_note": disk / size,
            "ram_bytes_per_note": (rss1 - rss0) / size,
        }
        # plain RAG: the same vectors in a numpy matrix
        texts = list(turns)
        start = time.perf_counter()
        matrix = np.ascontiguousarray(
            np.vstack([hashing.embed(texts[i : i + 10_000]) for i in range(0, size, 10_000)])
        )
        rag_build = time.perf_counter() - start
        gc.collect()
        rss2 = rss_bytes()
        out["plain RAG"] = {
            "build_s": rag_build,
            "write_per_s": size / rag_build,
            "ram_bytes_per_note": (rss2 - rss1) / size,
            "disk_bytes_per_note": 0.0,
        }

        def rag(vector: Any) -> list[str]:
            sims = matrix @ vector
            top = np.argpartition(-sims, 10)[:10]
            return [texts[i] for i in top[np.argsort(-sims[top])]]

        def rag_embedded(text: str) -> list[str]:
            return rag(hashing.embed([text])[0])

        lang = _langgraph(turns, hashing) if size <= langgraph_max else None
        if lang is not None:
            out["LangGraph"] = lang[1]
        cached.warm(asked)
        plain.recall(asked[0] + " warm", scope=SCOPE)
        samples: dict[str, list[float]] = {k: [] for k in ("cp_ex", "cp_in", "rag_ex", "rag_in")}
        lang_samples: dict[str, list[float]] = {"ex": [], "in": []}
        for q in asked:  # the systems take turns, query by query
            vector = cached.embed([q])[0]
            fresh = q + " "  # not in the query cache: embedded on the clock
            samples["cp_ex"].append(_timed(partial(memory.recall, q, scope=SCOPE)))
            samples["rag_ex"].append(_timed(partial(rag, vector)))
            samples["cp_in"].append(_timed(partial(plain.recall, fresh, scope=SCOPE)))
            samples["rag_in"].append(_timed(partial(rag_embedded, fresh)))
            if lang is not None and len(lang_samples["in"]) < LANGGRAPH_QUERIES:
                search = partial(lang[0].search, ("bench",), query=fresh, limit=10)
                lang_samples["in"].append(_timed(search))
        cp_ex, cp_in = _pcts(samples["cp_ex"]), _pcts(samples["cp_in"])
        rag_ex, rag_in = _pcts(samples["rag_ex"]), _pcts(samples["rag_in"])
        out["commonplace"]["recall_ms"] = {"excluded": cp_ex, "included": cp_in}
        out["plain RAG"]["recall_ms"] = {"excluded": rag_ex, "included": rag_in}
        out["commonplace"]["vs_rag_p50"] = {
            "excluded": cp_ex["p50"] / rag_ex["p50"],
            "included": cp_in["p50"] / rag_in["p50"],
        }
        if lang is not None:
            lg_in = _pcts(lang_samples["in"])
            out["LangGraph"]["recall_ms"] = {"included": lg_in}
    finally:
        memory.close()
        plain.close()
    return out


def _langgraph(turns: Sequence[str], embedder: HashingEmbedder) -> tuple[Any, dict[str, Any]]:
    from langgraph.store.base import PutOp
    from langgraph.store.memory import InMemoryStore

    from ..systems.langgraph_system import LangChainEmbeddings

    rss0 = rss_bytes()
    store = InMemoryStore(
        index={"dims": embedder.dim, "embed": LangChainEmbeddings(embedder), "fields": ["text"]}
    )
    start = time.perf_counter()
    for at in range(0, len(turns), 500):
        store.batch(
            [
                PutOp(("bench",), f"t{at + i}", {"text": text})
                for i, text in enumerate(turns[at : at + 500])
            ]
        )
    build = time.perf_counter() - start
    gc.collect()
    return store, {
        "build_s": build,
        "write_per_s": len(turns) / build,
        "ram_bytes_per_note": (rss_bytes() - rss0) / len(turns),
        "disk_bytes_per_note": 0.0,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m commonplace_bench.workloads.scaling")
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--store-only", action="store_true")
    parser.add_argument("--langgraph-max", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cp-scale-") as folder:
        result = measure(
            args.size,
            folder=Path(folder),
            queries=args.queries,
            store_only=args.store_only,
            langgraph_max=args.langgraph_max,
            seed=args.seed,
        )
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
