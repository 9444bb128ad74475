"""``commonplace-weaviate bench``: write throughput and recall latency, SQLite beside Weaviate.

The same synthetic conversation (distinct user turns spread over a few users, each
worth a note) is written through ``Memory.write_many`` in batches into a fresh
SQLite file and a fresh Weaviate store, then the same queries are recalled from
both. It prints a table; it asserts nothing (timings are never test assertions).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from commonplace import Episode, Kind, Memory, Record, Role, Tags
from commonplace.embedders import Embedder
from commonplace.stores import Backend, WriteBatch

_SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "ta",
    "vo",
    "zen",
    "pra",
    "qu",
    "sil",
    "dor",
    "mek",
    "fa",
    "gu",
    "hin",
    "bel",
    "cor",
    "dex",
    "pol",
)
_TEMPLATES = (
    "I started learning {a} with my friend {B} in {C}.",
    "My sister {B} works as a {a} near {C}.",
    "I really enjoy {a} on weekends with {B}.",
    "I am planning a trip to {C} to see {B} and try {a}.",
    "My colleague {B} recommended the {a} course in {C}.",
)
_QUERIES = (
    "what is the user learning?",
    "who is the user's sister?",
    "where is the trip going?",
    "what does the user enjoy on weekends?",
    "which course was recommended?",
)
BATCH = 250
_T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


@dataclass
class Result:
    store: str
    notes: int
    write_seconds: float
    recall_ms: list[float]
    search_ms: list[float]

    @property
    def turns_per_second(self) -> float:
        return self.notes / self.write_seconds if self.write_seconds else 0.0


def _conversation(n: int, scopes: int, seed: int = 7) -> list[tuple[str, str]]:
    rnd = random.Random(seed)

    def word() -> str:
        return "".join(rnd.choice(_SYLLABLES) for _ in range(3))

    return [
        (
            rnd.choice(_TEMPLATES).format(a=word(), B=word().title(), C=word().title()),
            f"user{i % scopes}",
        )
        for i in range(n)
    ]


def measure(url: str, *, notes: int, queries: int, scopes: int, label: str) -> Result:
    turns = _conversation(notes, scopes)
    with Memory(url) as memory:
        started = time.perf_counter()
        for start in range(0, len(turns), BATCH):
            memory.write_many(
                [memory.turn(text, scope=scope) for text, scope in turns[start : start + BATCH]]
            )
        written = time.perf_counter() - started
        recall_ms, search_ms = [], []
        backend = memory.backend
        for i in range(queries):
            query = _QUERIES[i % len(_QUERIES)]
            scope = f"user{i % scopes}"
            t0 = time.perf_counter()
            memory.recall(query, scope=scope)
            recall_ms.append((time.perf_counter() - t0) * 1000)
            vector = memory.embedder.embed([query])[0]
            from commonplace import Scope

            t0 = time.perf_counter()
            _raw_search(backend)(Scope(user=scope), vector, text=query, limit=100)
            search_ms.append((time.perf_counter() - t0) * 1000)
    return Result(label, notes, written, recall_ms, search_ms)


def _raw_search(backend: Backend) -> Callable[..., object]:
    """The backend's own search (both stores have one beside the protocol's ``read``): the
    raw query, without the core's batch around it."""
    search: Callable[..., object] | None = getattr(backend, "search", None)
    if search is None:
        raise TypeError(f"{type(backend).__name__} has no search of its own to time")
    return search


def measure_raw(backend: Backend, *, notes: int, queries: int, scopes: int, label: str) -> Result:
    """The store alone: ``apply`` in batches of 1,000 (vectors made beforehand) and
    ``search`` with a query text, as the recall compiler calls it (limit 100)."""

    from commonplace import HashingEmbedder, Scope

    embedder = HashingEmbedder()
    written = write_conversation(backend, embedder, _conversation(notes, scopes))
    search_ms = []
    for i in range(queries):
        query = _QUERIES[i % len(_QUERIES)]
        vector = embedder.embed([query])[0]
        t0 = time.perf_counter()
        _raw_search(backend)(Scope(user=f"user{i % scopes}"), vector, text=query, limit=100)
        search_ms.append((time.perf_counter() - t0) * 1000)
    return Result(label, notes, written, search_ms, search_ms)


def write_conversation(
    backend: Backend, embedder: Embedder, turns: Sequence[tuple[str, str]]
) -> float:
    """Pin ``embedder`` and write the turns (a note each) with ``apply`` in batches
    of 1,000, the vectors made beforehand; returns the seconds spent in ``apply``."""
    from commonplace import Scope
    from commonplace.stores import EmbedderPin, TurnWrite, episode_id, note_id

    backend.apply(WriteBatch(pin=EmbedderPin(embedder.name, embedder.dim)))
    written = 0.0
    for start in range(0, len(turns), 1000):
        writes = []
        for text, user in turns[start : start + 1000]:
            scope = Scope(user=user)
            eid = episode_id(scope, Role.USER, text, at=_T0)
            episode = Episode(eid, scope, Role.USER, text, _T0)
            record = Record(
                note_id(eid), Kind.NOTE, scope, "The user says " + text, Tags(), (eid,), _T0, _T0
            )
            writes.append(TurnWrite(episode, record))
        vectors = embedder.embed([w.note.text for w in writes if w.note is not None])
        t0 = time.perf_counter()
        backend.apply(WriteBatch(writes, vectors))
        written += time.perf_counter() - t0
    return written


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def table(results: Sequence[Result]) -> str:
    head = (
        f"{'store':<10}{'notes':>8}{'write turns/s':>15}{'recall p50 ms':>15}"
        f"{'recall p95 ms':>15}{'search p50 ms':>15}{'search p95 ms':>15}"
    )
    lines = [head, "-" * len(head)]
    for r in results:
        lines.append(
            f"{r.store:<10}{r.notes:>8}{r.turns_per_second:>15.0f}"
            f"{statistics.median(r.recall_ms):>15.2f}{_pct(r.recall_ms, 0.95):>15.2f}"
            f"{statistics.median(r.search_ms):>15.2f}{_pct(r.search_ms, 0.95):>15.2f}"
        )
    return "\n".join(lines)


@contextmanager
def serving(url: str | None, folder: Path) -> Iterator[tuple[str, int | None]]:
    """``url``, or the URL of a server started in ``folder`` for the block (and stopped),
    with that server's process id (None for ``url``)."""
    from . import server as srv

    if url is not None:
        yield url, None
        return
    installed = srv.install()
    node = srv.LocalServer(
        installed.path, data_dir=folder / "weaviate", log_path=folder / "weaviate.log"
    )
    seconds = node.start()
    print(f"# Weaviate {installed.version} started in {seconds:.1f}s at {node.url}")
    try:
        yield node.url, node.pid
    finally:
        node.stop()


def run(
    *, notes: Sequence[int], url: str | None, queries: int, scopes: int, raw: bool = False
) -> int:
    from commonplace.stores import SQLiteBackend

    from ._backend import WeaviateBackend, drop_store

    folder = Path(tempfile.mkdtemp(prefix="commonplace-bench-"))
    results = []
    with serving(url, folder) as (url, _):
        separator = "&" if "?" in url else "?"
        for n in notes:
            path = folder / f"bench-{n}.db"
            prefix = f"Bench{n}x{random.randrange(10**6)}"
            target = f"{url}{separator}prefix={prefix}"
            try:
                if raw:
                    sqlite = SQLiteBackend(path)
                    try:
                        results.append(
                            measure_raw(
                                sqlite, notes=n, queries=queries, scopes=scopes, label="sqlite"
                            )
                        )
                    finally:
                        sqlite.close()
                    print(table(results[-1:]), flush=True)
                    with WeaviateBackend(target) as weaviate:
                        results.append(
                            measure_raw(
                                weaviate, notes=n, queries=queries, scopes=scopes, label="weaviate"
                            )
                        )
                else:
                    results.append(
                        measure(
                            f"sqlite:///{path}",
                            notes=n,
                            queries=queries,
                            scopes=scopes,
                            label="sqlite",
                        )
                    )
                    print(table(results[-1:]), flush=True)
                    results.append(
                        measure(target, notes=n, queries=queries, scopes=scopes, label="weaviate")
                    )
                print(table(results[-1:]), flush=True)
            finally:
                drop_store(url, prefix)
    print()
    if raw:
        print(
            f"# the stores alone: apply in batches of 1000 (vectors made beforehand), "
            f"search(text, limit=100) over {scopes} users; 'recall' = search here"
        )
    else:
        print(
            f"# {queries} recalls over {scopes} users; writes in batches of {BATCH} "
            "through Memory.write_many (note writer, dedupe, supersession, links included)"
        )
    print(table(results))
    return 0
