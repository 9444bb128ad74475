"""Move a store from the embedded SQLite file to Weaviate, and prove nothing was lost.

``migrate("sqlite:///memory.db", "weaviate://127.0.0.1:8080")`` copies the embedder
pin, every episode, every derived record with its vector, provenance, counters,
tier and status, the use log, links, the audit log, recall logs, conflicts and
cards, then counts both sides (and compares every vector) and raises if anything
differs. Every step writes with deterministic ids, so an interrupted migration is
finished by running it again. Stop the writers of the source store first.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from commonplace import Episode, Kind, Record, Role, Scope, Status
from commonplace.errors import InvalidInputError, StoreError
from commonplace.stores import (
    AuditEntry,
    Card,
    RecallLog,
    RecordQuery,
    SQLiteBackend,
    TurnWrite,
    sqlite_path,
)

from . import _schema as S
from ._backend import WeaviateBackend
from ._mapping import as_utc, object_uuid, scope_props

Progress = Callable[[str, int], None]
_ALL_KINDS = (Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE)
_ALL_STATUSES = tuple(Status)


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
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy the SQLite store ``source`` into the Weaviate store ``target``; verify counts.

    Raises :class:`~commonplace.errors.StoreError` when ``verify`` finds a difference
    (the report is attached as ``error.report``). Safe to run again after a failure.
    """
    if not 1 <= batch <= 5000:
        raise InvalidInputError("batch must be between 1 and 5000")
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
    note = progress or (lambda what, n: None)
    try:
        with _read_only(src.path) as db:
            _copy(src, dst, db, batch=batch, note=note)
            if verify:
                _verify(src, dst, db, report)
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


def _copy(
    src: SQLiteBackend, dst: WeaviateBackend, db: sqlite3.Connection, *, batch: int, note: Progress
) -> None:
    pin = src.read_pin()
    if pin is not None:
        dst.write_pin(pin)
    copied = 0
    for episodes in _batches(_episodes(db), batch):
        dst.write_turns([TurnWrite(e) for e in episodes], None)
        copied += len(episodes)
        note("episodes", copied)
    uses = _uses(db)
    use_counts = Counter(rid for rid, _ in uses)
    copied = 0
    query = RecordQuery(scope=None, kinds=_ALL_KINDS, statuses=_ALL_STATUSES)
    for records in _batches(src.iter_records(query, batch=batch), batch):
        present = {r.id for r in dst.get_records([r.id for r in records])}
        fresh = [r for r in records if r.id not in present]
        if fresh:
            vectors = src.get_vectors([r.id for r in fresh])
            # the use log is copied as events below; they add up to the same used_count
            based = [replace(r, used_count=max(0, r.used_count - use_counts[r.id])) for r in fresh]
            dst.add_records(based, vectors)
        copied += len(records)
        note("records", copied)
    for start in range(0, len(uses), 5000):
        chunk = uses[start : start + 5000]
        dst._put_events(
            [(rid, "used", at) for rid, at in chunk],
            ids=[
                object_uuid("migrated-use", rid, str(start + i)) for i, (rid, _) in enumerate(chunk)
            ],
        )
    note("uses", len(uses))
    forgotten = _forgotten(db)
    for start in range(0, len(forgotten), 1000):
        dst._tombstones(forgotten[start : start + 1000])
    _copy_links(src, dst, db)
    _copy_bookkeeping(src, dst, db)


def _copy_links(src: SQLiteBackend, dst: WeaviateBackend, db: sqlite3.Connection) -> None:
    from weaviate.classes.data import DataObject

    rows = db.execute("SELECT a, b, kind, weight, updated_at FROM links").fetchall()
    objects = [
        DataObject(
            uuid=object_uuid("link", a, b, kind),
            properties={
                "a": a,
                "b": b,
                "kind": kind,
                "weight": float(weight),
                "updated_at": _date(updated),
            },
        )
        for a, b, kind, weight, updated in rows
    ]
    dst._insert(S.LINK, None, objects, "links", [f"{r[0]}~{r[1]}" for r in rows])


def _copy_bookkeeping(src: SQLiteBackend, dst: WeaviateBackend, db: sqlite3.Connection) -> None:
    from weaviate.classes.data import DataObject

    audit = db.execute(
        "SELECT seq, at, scope_user, scope_agent, scope_thread, action, rule, record_id, detail "
        "FROM audit ORDER BY seq"
    ).fetchall()
    objects = [
        DataObject(
            uuid=object_uuid("migrated-audit", str(seq)),
            properties={
                "at": _date(at),
                **scope_props(_scope(u, a, t)),
                "action": action,
                "rule": rule,
                "record_id": rid,
                "detail": detail,
                "seq": dst._seq.next(),
            },
        )
        for seq, at, u, a, t, action, rule, rid, detail in audit
    ]
    dst._insert(S.AUDIT, None, objects, "audit entries", [str(r[0]) for r in audit])
    for rid, u, a, t, at, items, feedback in db.execute(
        "SELECT id, scope_user, scope_agent, scope_thread, at, item_ids, feedback_at FROM recalls"
    ):
        ids = json.loads(items)  # {"retrieved": [...], "shown": [...]}, or a list before that
        retrieved, shown = (ids, []) if isinstance(ids, list) else (ids["retrieved"], ids["shown"])
        dst.log_recall(
            RecallLog(
                rid,
                _scope(u, a, t),
                _date(at),
                tuple(retrieved),
                None if feedback is None else _date(feedback),
                tuple(shown),
            )
        )
    for conflict in src.conflicts(None, open_only=False):
        dst.add_conflict(conflict)
    for u, a, t, kind, text, data, updated in db.execute(
        "SELECT scope_user, scope_agent, scope_thread, kind, text, data, updated_at FROM cards"
    ):
        dst.put_card(Card(_scope(u, a, t), kind, text, _date(updated), json.loads(data)))
    _ = AuditEntry  # the audit is copied row by row above, keeping its order


def _verify(
    src: SQLiteBackend, dst: WeaviateBackend, db: sqlite3.Connection, report: MigrationReport
) -> None:
    def one(sql: str) -> int:
        return int(db.execute(sql).fetchone()[0])

    forgotten = _forgotten(db)
    report.counts["forgotten episode ids"] = (
        len(forgotten),
        len(dst.existing_episode_ids(forgotten)),
    )
    report.counts["episodes"] = (
        one("SELECT count(*) FROM episodes"),
        dst.count(None, Kind.EPISODE),
    )
    query = RecordQuery(scope=None, kinds=_ALL_KINDS, statuses=_ALL_STATUSES)
    source_records = {r.id: r for r in src.iter_records(query)}
    target_records = {r.id: r for r in dst.iter_records(query)}
    for kind in _ALL_KINDS:
        for status in (Status.ACTIVE, Status.INVALID, Status.DELETED):
            plural = {"note": "notes", "summary": "summaries", "procedure": "procedures"}
            name = f"{plural[kind.value]} ({status.value})"
            report.counts[name] = (
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
    report.counts["uses"] = (
        one("SELECT count(*) FROM uses"),
        sum(
            dst.uses_since(list(source_records), datetime(1970, 1, 1, tzinfo=timezone.utc)).values()
        ),
    )
    report.counts["links"] = (one("SELECT count(*) FROM links"), dst._total(S.LINK))
    report.counts["audit entries"] = (
        one("SELECT count(*) FROM audit"),
        len(dst.audit_log(None, limit=10_000)),
    )
    report.counts["conflicts"] = (
        len(src.conflicts(None, open_only=False)),
        len(dst.conflicts(None, open_only=False)),
    )
    recall_ids = [r[0] for r in db.execute("SELECT id FROM recalls")]
    report.counts["recall logs"] = (
        len(recall_ids),
        sum(dst.get_recall(rid) is not None for rid in recall_ids),
    )
    cards = db.execute("SELECT scope_user, scope_agent, scope_thread, kind FROM cards").fetchall()
    report.counts["cards"] = (
        len(cards),
        sum(dst.get_card(_scope(u, a, t), kind) is not None for u, a, t, kind in cards),
    )
    ids = list(source_records)
    worst = 0.0
    for start in range(0, len(ids), 1000):
        chunk = ids[start : start + 1000]
        a, b = src.get_vectors(chunk), dst.get_vectors(chunk)
        if a.shape != b.shape:
            worst = float("inf")
            break
        if len(chunk):
            worst = max(worst, float(np.max(np.abs(a - b))))
    report.vectors_checked = len(ids)
    report.max_vector_error = worst


def _same(a: Record, b: Record | None) -> bool:
    """Equal in everything that matters (times to the microsecond, counters, provenance)."""
    return b is not None and replace(a, provenance=tuple(sorted(a.provenance))) == replace(
        b, provenance=tuple(sorted(b.provenance))
    )


def _episodes(db: sqlite3.Connection) -> Iterator[Episode]:
    for eid, u, a, t, role, text, at, meta in db.execute(
        "SELECT id, scope_user, scope_agent, scope_thread, role, text, at, meta "
        "FROM episodes ORDER BY seq"
    ):
        yield Episode(
            id=eid,
            scope=_scope(u, a, t),
            role=Role(role),
            text=text,
            at=_date(at),
            meta=json.loads(meta),
        )


def _forgotten(db: sqlite3.Connection) -> list[str]:
    """Ids of episodes forgotten on request (a table of schema v3 and later)."""
    try:
        return [row[0] for row in db.execute("SELECT id FROM forgotten ORDER BY id")]
    except sqlite3.OperationalError:
        return []


def _uses(db: sqlite3.Connection) -> list[tuple[str, datetime]]:
    return [
        (rid, _date(at)) for rid, at in db.execute("SELECT record_id, at FROM uses ORDER BY rowid")
    ]


def _batches(items: Iterator[Any] | Sequence[Any], size: int) -> Iterator[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _scope(user: str, agent: str, thread: str) -> Scope:
    return Scope(user=user or None, agent=agent or None, thread=thread or None)


def _date(seconds: float) -> datetime:
    return as_utc(datetime.fromtimestamp(float(seconds), tz=timezone.utc))


def _sqlite_path(url: str) -> str:
    if "://" in url and not url.lower().startswith("sqlite://"):
        raise InvalidInputError(
            f"the source must be an SQLite store (sqlite:///path.db), not {url!r}"
        )
    path = sqlite_path(url)  # the core's reading of the URL, errors included
    if path == ":memory:" or not Path(path).is_file():
        raise InvalidInputError(f"no SQLite store at {path!r}; give the path of an existing file")
    return path


class _read_only:
    """A read-only connection to the source file for the tables the protocol cannot list."""

    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)

    def __enter__(self) -> sqlite3.Connection:
        return self._db

    def __exit__(self, *exc: object) -> None:
        self._db.close()
