"""``commonplace-weaviate bench --recall``: a recall through ``Memory`` against the raw
Weaviate query it makes for its candidates, in one process, taking turns query by query.

A store of synthetic notes is written once through ``apply`` (vectors made
beforehand: only reads are measured), then for every query, in alternating order:

* ``Memory.recall(query, scope=user)`` on a Weaviate-backed Memory, the query's
  embedding made beforehand (``pre_embedded``), so the embedder costs a dictionary lookup;
* the raw candidate queries that recall's search sends (in its ``read_batch``): the
  near-vector and the BM25 query on the scope's tenant, with the same limit, filter,
  returned properties and metadata, sent straight through weaviate-client by a client of
  its own and, as the backend sends them, side by side. Their gRPC requests are checked to
  be among the very requests a recall of the same query sent.

While recalling it counts every request the backend's client sends (gRPC method or HTTP
method and path), the backend calls the core makes, and the time spent inside them, so
the table says where a recall's time goes: the core's own Python, and the backend (its
round trips and the decoding of what they return). Given the server's process id (it is
known when the bench starts the server), it also reads the server's CPU time around every
recall and raw pair: on a machine the server shares, the CPU both sides spend bounds the
wall time more than the rounds do. It asserts nothing.
"""

from __future__ import annotations

import functools
import os
import random
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from commonplace import HashingEmbedder, Kind, Memory
from commonplace.embedders import CallableEmbedder, Embedder, Vectors
from commonplace.errors import InvalidInputError
from commonplace.stores import ReadBatch

from . import _schema as S
from ._bench import _conversation, _pct, write_conversation
from ._mapping import tenant_name
from ._search import KEYWORD_RETURN, keywords_of

_QUESTIONS = (
    "what is the user learning?",
    "who is the user's sister?",
    "where is the trip going?",
    "what does the user enjoy on weekends?",
    "which course was recommended?",
    "what do I know about {name}?",
    "has {name} been to {place}?",
    "tell me about {name}",
)


def pre_embedded(inner: Embedder, texts: Sequence[str]) -> CallableEmbedder:
    """``inner`` with ``texts`` embedded beforehand: embedding one of them is a lookup."""
    made = dict(zip(texts, inner.embed(list(texts))))

    def embed(batch: Sequence[str]) -> Vectors:
        if all(t in made for t in batch):
            return np.stack([made[t] for t in batch])
        return inner.embed(batch)

    return CallableEmbedder(embed, name=inner.name, dim=inner.dim)


def questions(texts: Sequence[str], count: int, *, seed: int = 11) -> list[str]:
    """Questions about the conversation: general ones, and ones naming its people and
    places (those find notes by keyword that the vector search may not)."""
    rnd = random.Random(seed)
    names = [w.strip(".,") for t in texts[:2000] for w in t.split() if w[:1].isupper()]
    names = [n for n in names if n not in ("I", "My")]
    return [
        rnd.choice(_QUESTIONS).format(name=rnd.choice(names), place=rnd.choice(names))
        for _ in range(count)
    ]


# -- what a recall sends ---------------------------------------------------------------------


@dataclass
class Tally:
    """Requests and backend calls seen while ``active``, per label."""

    requests: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    call_us: Counter[str] = field(default_factory=Counter)  # wall time per call name, microseconds
    rounds: int = 0  # waits for the server: requests sent while none was in flight
    # the requests of each round, in order (a round's labels sorted)
    per_round: list[list[str]] = field(default_factory=list)
    in_flight: int = 0
    # seconds each request waits before it is sent, as over a slower network: the requests
    # of one round then overlap for certain, so ``rounds`` counts what waits for what
    latency: float = 0.0
    backend_s: float = 0.0
    searches: list[Any] = field(default_factory=list)  # SearchRequests, when capturing
    capture: bool = False
    active: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.calls.clear()
            self.call_us.clear()
            self.rounds = 0
            self.per_round.clear()
            self.backend_s = 0.0
            self.searches.clear()


def count_requests(client: Any, tally: Tally) -> None:
    """Count every gRPC and HTTP request ``client`` sends (wrapping its connection), and
    the rounds: how often the caller waits for the server (a request sent while another
    is in flight waits in the same round)."""
    from urllib.parse import urlsplit

    connection = client._connection

    def counted(label: str, request: Any, send: Callable[[], Any]) -> Any:
        if not tally.active:
            return send()
        with tally.lock:
            tally.requests[label] += 1
            if tally.in_flight == 0:
                tally.rounds += 1
                tally.per_round.append([])
            tally.per_round[-1].append(label)
            tally.in_flight += 1
            if tally.capture and label == "grpc Search":
                tally.searches.append(request)
        try:
            if tally.latency:
                time.sleep(tally.latency)
            return send()
        finally:
            with tally.lock:
                tally.in_flight -= 1

    def grpc(label: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        return lambda request, *a, **k: counted(label, request, lambda: inner(request, *a, **k))

    stub = connection.grpc_stub
    for method in ("Search", "BatchObjects", "BatchDelete", "TenantsGet", "Aggregate"):
        if hasattr(stub, method):
            setattr(stub, method, grpc(f"grpc {method}", getattr(stub, method)))
    send = connection._send

    def rest(method: str, *args: Any, url: str, **kwargs: Any) -> Any:
        label = f"http {method} " + "/".join(urlsplit(url).path.split("/")[:3])
        return counted(label, None, lambda: send(method, *args, url=url, **kwargs))

    connection._send = rest


_PROTOCOL = (
    "read",
    "apply",
    "search",
    "iter_records",
    "get_records",
    "get_vectors",
    "get_episodes",
    "recent_episodes",
    "links_of",
    "update_records",
    "count",
)
_LEDGER = ("get", "put", "list")


def time_backend(backend: Any, tally: Tally) -> None:
    """Time the backend calls the core makes (outermost ones on the calling thread only: not
    those a call makes, nor those it runs in the backend's pool; an ``iter_records`` stream
    is timed while it is read) and count them by name."""
    depth = threading.local()

    def timed(name: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(inner)
        def call(*args: Any, **kwargs: Any) -> Any:
            outer = getattr(depth, "n", 0) == 0 and threading.current_thread() is caller
            depth.n = getattr(depth, "n", 0) + 1
            t0 = time.perf_counter()
            try:
                result = inner(*args, **kwargs)
                if isinstance(result, Iterator):
                    result = list(result)  # read it here, inside the timing
                    result = iter(result)
                return result
            finally:
                depth.n -= 1
                if outer and tally.active:
                    spent = time.perf_counter() - t0
                    with tally.lock:
                        tally.backend_s += spent
                        tally.calls[name] += 1
                        tally.call_us[name] += round(spent * 1e6)

        return call

    caller = threading.current_thread()
    for name in _PROTOCOL:
        setattr(backend, name, timed(name, getattr(backend, name)))
    for name in _LEDGER:
        setattr(backend.ledger, name, timed(f"ledger.{name}", getattr(backend.ledger, name)))


# -- the raw query ---------------------------------------------------------------------------


class RawQuery:
    """The candidate queries of a recall's search, sent straight through weaviate-client."""

    def __init__(self, client: Any, collection: str, vector_name: str) -> None:
        from weaviate.classes.query import Filter, MetadataQuery

        self._col = client.collections.get(collection)
        self._vector = vector_name
        self._active = Filter.by_property("status").equal("active")
        self._distance = MetadataQuery(distance=True)
        self._score = MetadataQuery(score=True)
        self._pool = ThreadPoolExecutor(max_workers=2)

    def run(self, user: str, vector: Vectors, text: str, limit: int) -> int:
        """Both queries side by side (as the backend sends them); how many objects came."""
        col = self._col.with_tenant(tenant_name((user, "", "")))
        qlist = np.asarray(vector, np.float32).ravel().tolist()
        near = self._pool.submit(
            col.query.near_vector,
            near_vector=qlist,
            target_vector=self._vector,
            limit=limit,
            filters=self._active,
            return_properties=S.RECORD_RETURN,
            return_metadata=self._distance,
        )
        keywords = keywords_of(text)
        found = 0
        if keywords:
            found += len(
                col.query.bm25(
                    query=keywords,
                    query_properties=["search"],
                    limit=limit,
                    filters=self._active,
                    return_properties=KEYWORD_RETURN,
                    return_metadata=self._score,
                ).objects
            )
        return found + len(near.result().objects)

    def close(self) -> None:
        self._pool.shutdown()


# -- the run ---------------------------------------------------------------------------------


@dataclass
class Run:
    recall_ms: list[float] = field(default_factory=list)
    raw_ms: list[float] = field(default_factory=list)
    backend_ms: list[float] = field(default_factory=list)
    recall_cpu_ms: list[float] = field(default_factory=list)  # this process, every thread
    raw_cpu_ms: list[float] = field(default_factory=list)
    requests: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    call_us: Counter[str] = field(default_factory=Counter)
    rounds: int = 0
    # how often each round (its number, its requests) was seen
    round_kinds: Counter[tuple[int, str]] = field(default_factory=Counter)
    # the server's CPU seconds over every recall and every raw pair (when its pid is known)
    recall_server_s: float | None = None
    raw_server_s: float | None = None

    @property
    def ratio(self) -> float:
        return statistics.median(self.recall_ms) / statistics.median(self.raw_ms)


def server_cpu_s(pid: int) -> float:
    """The CPU time (user and system, every thread) process ``pid`` has used, in seconds.

    Linux counts it in clock ticks (10 ms on most kernels), so one query's share is coarse
    and only a sum over many queries means something."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError, ValueError) as exc:
        raise InvalidInputError(
            f"cannot read the CPU time of process {pid} ({exc}); pass the pid of a Weaviate "
            "server running on this machine (the bench finds it when it starts the server)"
        ) from None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(
    url: str,
    *,
    notes: int,
    scopes: int,
    queries: int,
    runs: int,
    fill_store: bool = True,
    server_pid: int | None = None,
) -> tuple[list[Run], bool]:
    """``runs`` rounds of ``queries`` recalls and raw queries, taking turns; and whether
    the raw queries' gRPC requests are the backend's own. With ``server_pid``, the CPU time
    of that process is read around each of them too (outside the timed calls)."""
    from ._backend import WeaviateBackend, _connect

    if server_pid is not None:
        server_cpu_s(server_pid)  # a pid that cannot be read fails before anything is written
    inner = HashingEmbedder()
    turns = _conversation(notes, scopes)
    if fill_store:
        with WeaviateBackend(url) as writer:
            write_conversation(writer, inner, turns)
    texts = [text for text, _ in turns]
    asked = [(q, f"user{i % scopes}") for i, q in enumerate(questions(texts, queries))]
    embedder = pre_embedded(inner, list(dict.fromkeys(q for q, _ in asked)))
    tally = Tally()
    out: list[Run] = []
    with Memory(url, embedder=embedder) as memory:
        backend: Any = memory.backend
        raw_client = _connect(backend.settings)
        try:
            count_requests(backend.client, tally)
            time_backend(backend, tally)
            limits: list[int] = []
            read_batch = backend.read_batch

            def spy(batch: ReadBatch) -> Any:
                assert batch.search is not None
                limits.append(batch.search.limit)
                return read_batch(batch)

            backend.read_batch = spy
            note = backend.settings.prefix + S.NOTE.suffix
            raw = RawQuery(raw_client, note, backend._live_vector())
            same = _same_requests(memory, raw, raw_client, tally, asked[0], embedder, limits)
            for q, user in asked[: min(10, len(asked))]:  # warm both paths
                memory.recall(q, scope=user)

            def server_now() -> float:
                return 0.0 if server_pid is None else server_cpu_s(server_pid)

            for _ in range(runs):
                run = Run()
                server_s = [0.0, 0.0]  # recalls, raw pairs
                for i, (q, user) in enumerate(asked):
                    vector = embedder.embed([q])[0]
                    order = (0, 1) if i % 2 == 0 else (1, 0)
                    for which in order:
                        before = server_now()
                        if which == 0:
                            tally.reset()
                            tally.active = True
                            t0, c0 = time.perf_counter(), time.process_time()
                            memory.recall(q, scope=user)
                            run.recall_ms.append((time.perf_counter() - t0) * 1000)
                            run.recall_cpu_ms.append((time.process_time() - c0) * 1000)
                            tally.active = False
                            run.backend_ms.append(tally.backend_s * 1000)
                            run.requests.update(tally.requests)
                            run.rounds += tally.rounds
                            run.round_kinds.update(
                                (n, _requests_of(labels))
                                for n, labels in enumerate(tally.per_round, 1)
                            )
                            run.calls.update(tally.calls)
                            run.call_us.update(tally.call_us)
                        else:
                            t0, c0 = time.perf_counter(), time.process_time()
                            raw.run(user, vector, q, limits[-1])
                            run.raw_ms.append((time.perf_counter() - t0) * 1000)
                            run.raw_cpu_ms.append((time.process_time() - c0) * 1000)
                        server_s[which] += server_now() - before
                if server_pid is not None:
                    run.recall_server_s, run.raw_server_s = server_s
                out.append(run)
            raw.close()
        finally:
            raw_client.close()
    return out, same


def _same_requests(
    memory: Memory,
    raw: RawQuery,
    raw_client: Any,
    tally: Tally,
    asked: tuple[str, str],
    embedder: Embedder,
    limits: list[int],
) -> bool:
    """Whether the raw queries are among the very gRPC requests a recall sends."""
    query, user = asked
    tally.reset()
    tally.capture = tally.active = True
    memory.recall(query, scope=user)
    tally.active = False
    theirs = list(tally.searches)
    tally.reset()
    mine = Tally(capture=True, active=True)
    count_requests(raw_client, mine)
    raw.run(user, embedder.embed([query])[0], query, limits[-1])
    mine.active = False
    sent = Counter(r.SerializeToString(deterministic=True) for r in theirs)
    made = Counter(r.SerializeToString(deterministic=True) for r in mine.searches)
    return bool(made) and all(sent[k] >= n for k, n in made.items())


def table(notes: int, runs: Sequence[Run]) -> str:
    """One line per run and their medians: recall and raw p50/p95, the ratio of the p50s,
    the time recall spent in backend calls and outside them (the core's own), and the
    CPU time of this process (every thread) per recall and per raw pair; when the server's
    was read, its mean CPU time per recall and per raw pair as well."""
    server = all(r.recall_server_s is not None for r in runs)
    names: tuple[str, ...] = (
        "recall p50",
        "recall p95",
        "raw p50",
        "raw p95",
        "ratio",
        "backend p50",
        "core p50",
        "recall cpu",
        "raw cpu",
    )
    if server:
        names += ("recall srv", "raw srv")
    head = f"{'notes':>8}{'run':>5}" + "".join(f"{n:>12}" for n in names)
    lines = [head, "-" * len(head)]
    rows = []
    for n, r in enumerate(runs, 1):
        core = [a - b for a, b in zip(r.recall_ms, r.backend_ms)]
        row: tuple[float, ...] = (
            statistics.median(r.recall_ms),
            _pct(r.recall_ms, 0.95),
            statistics.median(r.raw_ms),
            _pct(r.raw_ms, 0.95),
            r.ratio,
            statistics.median(r.backend_ms),
            statistics.median(core),
            statistics.median(r.recall_cpu_ms),
            statistics.median(r.raw_cpu_ms),
        )
        if server:
            row += (
                (r.recall_server_s or 0.0) * 1000 / len(r.recall_ms),
                (r.raw_server_s or 0.0) * 1000 / len(r.raw_ms),
            )
        rows.append(row)
        lines.append(f"{notes:>8}{n:>5}" + _cells(row))
    median = tuple(statistics.median(col) for col in zip(*rows))
    lines.append(f"{notes:>8}{'med':>5}" + _cells(median))
    return "\n".join(lines)


def _cells(row: Sequence[float]) -> str:
    return "".join(f"{v:>11.2f}x" if i == 4 else f"{v:>12.2f}" for i, v in enumerate(row))


def _requests_of(labels: Sequence[str]) -> str:
    """A round's requests, e.g. ``"grpc Aggregate, 2 grpc Search"``."""
    counted = Counter(labels)
    return ", ".join(f"{n} {k}" if n > 1 else k for k, n in sorted(counted.items()))


def trips(runs: Sequence[Run], queries: int) -> str:
    """Requests and backend calls per recall, averaged over every run, and the rounds:
    which requests each one sent, most seen first (their share of the recalls)."""
    total = queries * len(runs)
    requests: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    call_us: Counter[str] = Counter()
    kinds: Counter[tuple[int, str]] = Counter()
    for r in runs:
        requests.update(r.requests)
        calls.update(r.calls)
        call_us.update(r.call_us)
        kinds.update(r.round_kinds)
    rounds = sum(r.rounds for r in runs)
    lines = [f"rounds per recall (waits for the server): {rounds / total:.2f}"]
    for n in sorted({n for n, _ in kinds}):
        seen = sorted(((c, k) for (m, k), c in kinds.items() if m == n), reverse=True)
        lines += [f"  round {n} ({c / total:.0%}): {k}" for c, k in seen[:3]]
    lines += [f"requests per recall: {sum(requests.values()) / total:.2f}"]
    lines += [f"  {k:<40}{v / total:>7.2f}" for k, v in requests.most_common()]
    lines.append(
        f"backend calls per recall: {sum(calls.values()) / total:.2f}, "
        f"{sum(call_us.values()) / total / 1000:.2f} ms (mean)"
    )
    lines += [
        f"  {k:<40}{v / total:>7.2f}{call_us[k] / total / 1000:>9.2f} ms"
        for k, v in calls.most_common()
    ]
    return "\n".join(lines)


def run(
    *,
    notes: Sequence[int],
    url: str | None,
    queries: int,
    scopes: int,
    runs: int,
    prefix: str | None = None,
    server_pid: int | None = None,
) -> int:
    """Print the table for each store size. With ``prefix`` the store is kept (and filled
    only when it holds fewer notes than asked), so a later run measures the same data.
    The server's CPU time is read when the bench starts the server, or from ``server_pid``."""
    import tempfile
    from pathlib import Path

    from ._backend import WeaviateBackend, drop_store
    from ._bench import serving

    if server_pid is not None:
        server_cpu_s(server_pid)  # fails before a server is started or a store is read
    folder = Path(tempfile.mkdtemp(prefix="commonplace-bench-"))
    with serving(url, folder) as (url, started):
        pid = started if started is not None else server_pid
        separator = "&" if "?" in url else "?"
        for n in notes:
            name = f"{prefix}{n}" if prefix else f"Recall{n}x{random.randrange(10**6)}"
            target = f"{url}{separator}prefix={name}"
            try:
                with WeaviateBackend(target) as backend:
                    empty = backend.count(None, Kind.NOTE) < n
                if empty:
                    print(f"# writing {n} notes into {name}", flush=True)
                found, same = measure(
                    target,
                    notes=n,
                    scopes=scopes,
                    queries=queries,
                    runs=runs,
                    fill_store=empty,
                    server_pid=pid,
                )
            finally:
                if prefix is None:
                    drop_store(url, name)
            print(
                f"# {queries} recalls over {scopes} users, each beside the raw near-vector + "
                f"BM25 pair it sends (sent as the backend does; identical gRPC requests: "
                f"{'yes' if same else 'NO'}), {runs} runs; milliseconds"
                + ("; srv: the server's CPU, mean per query" if pid is not None else "")
            )
            print(table(n, found))
            print(trips(found, queries), flush=True)
    return 0
