"""Move a store from the embedded SQLite file to Weaviate, and prove nothing was lost.

``migrate("sqlite:///memory.db", "weaviate://127.0.0.1:8080")`` copies the store with
``commonplace.stores.copy`` (the embedder pin, every episode, every derived record with
its vector, provenance, counters, tier and status, every ledger entry: the audit log,
recall logs, conflicts, cards, the use log, the ids of forgotten turns; and the links),
then counts both sides through the public protocol (episodes, records per kind and
status, provenance, links, ledger entries per kind), compares every record and every
vector, and raises if anything differs. The copy writes with deterministic ids, so an
interrupted migration is finished by running it again. Stop the writers of the source
store first.

``progress`` is what commonplace's long jobs take (``commonplace.progress``): None, the
default, draws bars on stderr (one per part of the copy, one over the vectors compared)
only when stderr is a terminal; True always, False never. A function instead is told
each part's count as the copy goes, as ``commonplace.stores.copy`` tells it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from commonplace import Kind, Record, Status
from commonplace.errors import InvalidInputError, StoreError
from commonplace.progress import PartCounter, ProgressBar, checked_progress
from commonplace.stores import (
    Backend,
    LinkGraph,
    RecordQuery,
    SQLiteBackend,
    Store,
    sqlite_path,
)
from commonplace.stores import copy as copy_store

from ._backend import WeaviateBackend

_ALL_KINDS = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)
_ALL_STATUSES = tuple(Status)
_PLURAL = {"note": "notes", "summary": "summaries", "procedure": "procedures"}


@dataclass
class MigrationReport:
    """What was copied, the counts on both sides, and whether they agree."""

    source: str
    target: str
    seconds: float = 0.0
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    vectors_checked: int = 0
    max_vector_error: float = 0.0

    @property
    def ok(self) -> bool:
        return all(a == b for a, b in self.counts.values()) and self.max_vector_error < 1e-5

    def mismatches(self) -> dict[str, tuple[int, int]]:
        return {name: pair for name, pair in self.counts.items() if pair[0] != pair[1]}

    def table(self) -> str:
        lines = [f"{'what':<22}{'source':>10}{'target':>10}"]
        for name, (a, b) in self.counts.items():
            lines.append(f"{name:<22}{a:>10}{b:>10}{'' if a == b else '  MISMATCH'}")
        lines.append(
            f"vectors compared: {self.vectors_checked}, largest difference "
            f"{self.max_vector_error:.2e}; {self.seconds:.1f}s"
        )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "counts": {k: {"source": a, "target": b} for k, (a, b) in self.counts.items()},
            "vectors_checked": self.vectors_checked,
            "max_vector_error": self.max_vector_error,
        }


def migrate(
    source: str | SQLiteBackend,
    target: str | WeaviateBackend,
    *,
    batch: int = 500,
    verify: bool = True,
    progress: bool | PartCounter | None = None,
) -> MigrationReport:
    """Copy the SQLite store ``source`` into the Weaviate store ``target``; verify counts.

    Raises :class:`~commonplace.errors.StoreError` when ``verify`` finds a difference
    (the report is attached as ``error.report``). Safe to run again after a failure.
    """
    if not 1 <= batch <= 5000:
        raise InvalidInputError("batch must be between 1 and 5000")
    if not callable(progress):
        checked_progress(progress)
    own_source = isinstance(source, str)
    own_target = isinstance(target, str)
    src = SQLiteBackend(_sqlite_path(source)) if isinstance(source, str) else source
    try:
        dst = WeaviateBackend(target) if isinstance(target, str) else target
    except BaseException:
        if own_source:
            src.close()
        raise
    started = time.perf_counter()
    report = MigrationReport(source=src.url, target=dst.url)
    try:
        copy_store(src, dst, batch=batch, progress=progress)
        if verify:
            _verify(src, dst, report, progress=None if callable(progress) else progress)
    finally:
        if own_target:
            dst.close()
        if own_source:
            src.close()
    report.seconds = time.perf_counter() - started
    if verify and not report.ok:
        error = StoreError(
            f"the migration copied data but the counts differ ({report.mismatches()}); run "
            "it again to finish an interrupted copy, and make sure nothing else writes to "
            "either store meanwhile"
        )
        error.report = report  # type: ignore[attr-defined]
        raise error
    return report


def _verify(src: Backend, dst: Backend, report: MigrationReport, *, progress: bool | None) -> None:
    report.counts["episodes"] = (src.count(None, Kind.EPISODE), dst.count(None, Kind.EPISODE))
    query = RecordQuery(scope=None, kinds=_ALL_KINDS, statuses=_ALL_STATUSES)
    source_records = {r.id: r for r in src.iter_records(query)}
    target_records = {r.id: r for r in dst.iter_records(query)}
    for kind in _ALL_KINDS:
        for status in (Status.ACTIVE, Status.INVALID, Status.DELETED):
            report.counts[f"{_PLURAL[kind.value]} ({status.value})"] = (
                sum(1 for r in source_records.values() if (r.kind, r.status) == (kind, status)),
                sum(1 for r in target_records.values() if (r.kind, r.status) == (kind, status)),
            )
    report.counts["provenance edges"] = (
        sum(len(r.provenance) for r in source_records.values()),
        sum(len(r.provenance) for r in target_records.values()),
    )
    report.counts["records equal"] = (
        len(source_records),
        sum(1 for rid, r in source_records.items() if _same(r, target_records.get(rid))),
    )
    ids = list(source_records)
    if isinstance(src, LinkGraph) and isinstance(dst, LinkGraph):
        report.counts["links"] = (_links(src, ids), _links(dst, list(target_records)))
    for name in sorted({*src.ledger.kinds(), *dst.ledger.kinds()}):
        report.counts[f"ledger:{name}"] = (
            len(src.ledger.list(name)),
            len(dst.ledger.list(name)),
        )
    worst = 0.0
    with ProgressBar(
        desc="comparing vectors", unit="vector", total=len(ids), progress=progress
    ) as bar:
        for start in range(0, len(ids), 1000):
            chunk = ids[start : start + 1000]
            a, b = (
                np.asarray(Store(src).get_vectors(chunk)),
                np.asarray(Store(dst).get_vectors(chunk)),
            )
            if a.shape != b.shape:
                worst = float("inf")
                break
            if len(chunk):
                worst = max(worst, float(np.max(np.abs(a - b))))
            bar.update(len(chunk))
    report.vectors_checked = len(ids)
    report.max_vector_error = worst


def _links(store: LinkGraph, record_ids: Sequence[str]) -> int:
    """How many links touch these records (every link of a store touches its records)."""
    keys: set[tuple[str, str, str]] = set()
    for start in range(0, len(record_ids), 500):
        chunk = record_ids[start : start + 500]
        keys.update((k.a, k.b, k.kind) for k in store.links_of(chunk, min_weight=0.0))
    return len(keys)


def _same(a: Record, b: Record | None) -> bool:
    """Equal in everything that matters (times to the microsecond, counters, provenance)."""
    return b is not None and replace(a, provenance=tuple(sorted(a.provenance))) == replace(
        b, provenance=tuple(sorted(b.provenance))
    )


def _sqlite_path(url: str) -> str:
    if "://" in url and not url.lower().startswith("sqlite://"):
        raise InvalidInputError(
            f"the source must be an SQLite store (sqlite:///path.db), not {url!r}"
        )
    path = sqlite_path(url)  # the core's reading of the URL, errors included
    if path == ":memory:" or not Path(path).is_file():
        raise InvalidInputError(f"no SQLite store at {path!r}; give the path of an existing file")
    return path
