"""What the reliability suite shares: sizes, a tally, store inspection and workloads.

Sizes come from ``COMMONPLACE_RELIABILITY``: ``short`` (the default, what ``nox -s tests``
and CI run: seeded, a couple of minutes at most, but every test still kills, races and
fuzzes for real) or ``long`` (``nox -s reliability``: the same tests, scaled up). The
seed is ``COMMONPLACE_RELIABILITY_SEED`` (fixed by default, so a failure replays).

Store inspection reads the SQLite file directly, beside commonplace, so that what a test
checks does not depend on the code under test.
"""

from __future__ import annotations

import collections
import json
import os
import random
import sqlite3
import sys
import threading
import traceback
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

from commonplace import Config, ConsolidationRules, Memory, ProfileRules, Scope
from commonplace._records import note_id

# -- sizes -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    kills: int  # SIGKILLs of a writer process
    race_workers: int  # threads, and as many asyncio tasks, on one store
    race_ops: int  # operations per racing worker
    process_ops: int  # operations per process in the two-process race
    fuzz_examples: int  # hypothesis examples per fuzz test
    isolation_examples: int  # hypothesis examples per isolation property
    soak_ops: int  # operations of the soak


SHORT = Sizes(
    kills=30,
    race_workers=6,
    race_ops=40,
    process_ops=80,
    fuzz_examples=150,
    isolation_examples=30,
    soak_ops=2_000,
)
# The long variant is the same tests at about five to ten times the short sizes, sized to
# finish in under 30 minutes on 2 cores (it took 1 h 30 at 20x, the soak alone 50 min).
# Two tests kill (the store alone, and with vector graphs): 2 x 300 SIGKILLs in all.
# noxfile.py's reliability docstring and docs/guarantees.md say these numbers
# (tests/reliability/test_variant_sizes.py checks that they do).
LONG = Sizes(
    kills=300,
    race_workers=12,
    race_ops=200,
    process_ops=600,
    fuzz_examples=750,
    isolation_examples=150,
    soak_ops=15_000,
)
VARIANT = os.environ.get("COMMONPLACE_RELIABILITY", "short").strip().lower() or "short"
if VARIANT not in ("short", "long"):
    raise RuntimeError(f"COMMONPLACE_RELIABILITY must be short or long, not {VARIANT!r}")
SIZES = LONG if VARIANT == "long" else SHORT
SEED = int(os.environ.get("COMMONPLACE_RELIABILITY_SEED", "20260105"))

# Hypothesis runs derandomised, so a failure replays exactly. The profiles are applied per
# test (``@profile(n)``) and never change hypothesis settings for the rest of the suite.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("long", parent=settings.get_profile("ci"))


def profile(max_examples: int) -> settings:
    """The suite's hypothesis settings (``ci`` or ``long``) with ``max_examples``."""
    return settings(
        settings.get_profile(VARIANT if VARIANT == "long" else "ci"), max_examples=max_examples
    )


# What the suite did, printed at the end of the run (see conftest.py).
TALLY: collections.Counter[str] = collections.Counter()
_TALLY_LOCK = threading.Lock()


def tally(name: str, n: int = 1) -> None:
    with _TALLY_LOCK:
        TALLY[name] += n


# -- the configuration the workloads run with --------------------------------------------------

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
# Search from the first note, consolidate at once and in small clusters, rewrite cards
# often: every path of the write and lifecycle code runs within a few operations.
BUSY = Config(
    search_min_notes=0,
    consolidation=ConsolidationRules(min_age_days=0, min_cluster_size=2),
    profile=ProfileRules(rewrite_every=3),
)


def url_of(path: Path | str) -> str:
    return "sqlite:///" + str(path)


# -- store inspection (plain sqlite3, independent of commonplace) ----------------------------


def _connect(path: Path | str) -> sqlite3.Connection:
    return sqlite3.connect(str(path), timeout=60, isolation_level=None)


def integrity_problems(path: Path | str) -> list[str]:
    """SQLite's integrity check, plus the full-text index against its content table."""
    db = _connect(path)
    try:
        rows = [r[0] for r in db.execute("PRAGMA integrity_check")]
        problems = [] if rows == ["ok"] else [f"integrity_check: {r}" for r in rows]
        has_fts = db.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'records_fts'"
        ).fetchone()[0]
        if has_fts:
            try:
                db.execute(
                    "INSERT INTO records_fts (records_fts, rank) VALUES ('integrity-check', 1)"
                )
            except sqlite3.DatabaseError as exc:
                problems.append(f"fts integrity-check: {exc}")
        return problems
    finally:
        db.close()


def tables(db: sqlite3.Connection) -> list[str]:
    """Every table with rows of its own (shadow tables of virtual tables included)."""
    return [
        name
        for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        if not (sql or "").upper().startswith("CREATE VIRTUAL")
    ]


def dump(path: Path | str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, in a stable order: equal dumps mean an unchanged store."""
    db = _connect(path)
    try:
        out = {}
        for name in tables(db):
            rows = db.execute(f'SELECT * FROM "{name}"').fetchall()
            out[name] = sorted(rows, key=repr)
        out["pragma"] = [
            tuple(db.execute(f"PRAGMA {p}").fetchone()) for p in ("application_id", "user_version")
        ]
        return out
    finally:
        db.close()


@dataclass(frozen=True)
class Hit:
    table: str
    column: str
    needle: str
    value: str


def _as_bytes(value: object) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")


def scan(path: Path | str, needles: Iterable[str]) -> list[Hit]:
    """Every cell of every table (FTS shadow tables and sqlite_sequence included) that holds
    one of ``needles`` (compared case-insensitively, as text or inside blobs), and every
    term of the full-text index that is one of them."""
    wanted = {n: n.lower().encode("utf-8") for n in needles}
    hits: list[Hit] = []
    db = _connect(path)
    try:
        for name in tables(db):
            cursor = db.execute(f'SELECT * FROM "{name}"')
            columns = [d[0] for d in cursor.description]
            for row in cursor:
                for column, value in zip(columns, row):
                    raw = _as_bytes(value).lower()
                    for needle, encoded in wanted.items():
                        if encoded in raw:
                            hits.append(Hit(name, column, needle, repr(value)[:120]))
        has_fts = db.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'records_fts'"
        ).fetchone()[0]
        if has_fts:
            db.execute(
                "CREATE VIRTUAL TABLE temp.scan_vocab USING fts5vocab(main, records_fts, row)"
            )
            terms = {t for (t,) in db.execute("SELECT term FROM temp.scan_vocab")}
            for needle in wanted:
                if needle.lower() in terms:
                    hits.append(Hit("records_fts (index terms)", "term", needle, needle.lower()))
        return hits
    finally:
        db.close()


def logical_bytes(path: Path | str) -> int:
    """The bytes of data the store holds: every value of every table (FTS shadow tables
    excluded, as they are an index of the records), as SQLite measures it."""
    db = _connect(path)
    try:
        total = 0
        for name in tables(db):
            if name.startswith("records_fts"):
                continue
            columns = [r[1] for r in db.execute(f'PRAGMA table_info("{name}")')]
            expr = " + ".join(f'coalesce(length("{c}"), 0)' for c in columns)
            total += db.execute(f'SELECT coalesce(sum({expr}), 0) FROM "{name}"').fetchone()[0]
        return int(total)
    finally:
        db.close()


def file_bytes(path: Path | str) -> int:
    """The store on disk: the database file and its write-ahead log."""
    base = Path(path)
    return sum(p.stat().st_size for p in (base, Path(f"{base}-wal")) if p.exists())


def rss_bytes() -> int:
    """This process's resident set size now (Linux), else its peak."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # pragma: no cover - not Linux
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if sys.platform == "darwin" else peak * 1024)


# -- workload text ------------------------------------------------------------------------------

RELATIONS = ("sister", "brother", "friend", "boss", "cousin", "neighbour")
NAMES = ("Mia", "Tom", "Rita", "Joao", "Karen", "Luis", "Ines", "Omar")
DOINGS = (
    "plays chess",
    "likes hiking",
    "works as a nurse",
    "studies law",
    "sings in a choir",
    "bakes bread",
    "collects stamps",
    "runs marathons",
)
CITIES = ("Lisbon", "Porto", "Berlin", "Oslo", "Quito", "Osaka")
REPORTS = ("weekly", "monthly", "sales", "travel")


def marker(n: int) -> str:
    """A word no template uses, to find one turn's traces anywhere in a store."""
    return f"zx{n:07d}q"


def turn_text(rng: random.Random, n: int | None = None) -> str:
    """A user turn: mostly facts about named people (which cluster into summaries), some
    facts that supersede each other, requests that become procedures, and noise."""
    tag = f" {marker(n)}" if n is not None else ""
    roll = rng.random()
    if roll < 0.6:
        return f"My {rng.choice(RELATIONS)} {rng.choice(NAMES)} {rng.choice(DOINGS)}{tag}."
    if roll < 0.75:
        return f"I live in {rng.choice(CITIES)}{tag}."
    if roll < 0.9:
        return f"Can you draft my {rng.choice(REPORTS)} report again{tag}?"
    return rng.choice(("ok", "lol", "wait", "thanks!"))


SCOPES = (
    Scope(user="ana"),
    Scope(user="ana", thread="t1"),
    Scope(user="ana", thread="t2"),
    Scope(user="bob", agent="coach"),
    Scope(user="bob", agent="coach", thread="t1"),
)


# -- racing workers -----------------------------------------------------------------------------


@dataclass
class RaceLog:
    """What one racing worker did and saw, enough to know what the store must hold."""

    created: collections.Counter[str] = field(default_factory=collections.Counter)
    turns: set[str] = field(default_factory=set)
    touched: collections.Counter[str] = field(default_factory=collections.Counter)
    merged: collections.Counter[str] = field(default_factory=collections.Counter)
    used: collections.Counter[str] = field(default_factory=collections.Counter)
    ignored: collections.Counter[str] = field(default_factory=collections.Counter)
    feedback_taken: int = 0
    feedback_refused: int = 0
    ops: int = 0
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "created": dict(self.created),
            "turns": sorted(self.turns),
            "touched": dict(self.touched),
            "merged": dict(self.merged),
            "used": dict(self.used),
            "ignored": dict(self.ignored),
            "feedback_taken": self.feedback_taken,
            "feedback_refused": self.feedback_refused,
            "ops": self.ops,
            "errors": self.errors,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RaceLog:
        return cls(
            collections.Counter(data["created"]),
            set(data["turns"]),
            collections.Counter(data["touched"]),
            collections.Counter(data["merged"]),
            collections.Counter(data["used"]),
            collections.Counter(data["ignored"]),
            data["feedback_taken"],
            data["feedback_refused"],
            data["ops"],
            list(data["errors"]),
        )


# Turns every worker writes, so that several writers race on the same episode (a turn is
# its time too: each is said at one moment, whoever writes it).
SHARED_AT = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
SHARED_TURNS = tuple(
    (
        SCOPES[i % len(SCOPES)],
        f"My friend {NAMES[i % len(NAMES)]} {DOINGS[i % len(DOINGS)]} {marker(9_000_000 + i)}.",
    )
    for i in range(12)
)


def race(
    memory: Memory,
    *,
    worker: int,
    ops: int,
    seed: int,
    log: RaceLog,
    recalls: list[Any] | None = None,
) -> None:
    """A worker's share of the race: writes (its own turns and shared ones), batches,
    recalls, feedback (on recalls of its own or, with a shared ``recalls`` list, of any
    racer: so one recall gets feedback from several racers), consolidation and the whole
    lifecycle."""
    rng = random.Random(f"{seed}-{worker}")
    recalls = [] if recalls is None else recalls
    for n in range(ops):
        roll = rng.random()
        try:
            if roll < 0.30:
                scope = rng.choice(SCOPES)
                _write(memory, log, [(scope, turn_text(rng, worker * 100_000 + n))])
            elif roll < 0.40:
                _write(memory, log, [rng.choice(SHARED_TURNS)], at=SHARED_AT)
            elif roll < 0.48:
                batch = [
                    (rng.choice(SCOPES), turn_text(rng, worker * 100_000 + n * 10 + k))
                    for k in range(rng.randint(2, 5))
                ]
                _write(memory, log, batch)
            elif roll < 0.70:
                found = memory.recall(
                    turn_text(rng), scope=rng.choice(SCOPES), top_k=rng.randint(1, 8)
                )
                # an access is a record put forward that is about as relevant as the best
                # (whole gate); the near misses put forward count only if ignored
                gated = {i.record.id for i in found.items if i.score.gate >= 1.0}
                log.touched.update(r for r in found.retrieved if r in gated)
                if found.included:
                    recalls.append(found)
            elif roll < 0.85 and recalls:
                found = rng.choice(recalls)
                used = rng.sample(list(found.included), rng.randint(0, len(found.included)))
                result = memory.feedback(found.id, used=used)
                if result.already_given:
                    log.feedback_refused += 1
                else:
                    log.feedback_taken += 1
                    log.used.update(result.used)
                    log.ignored.update(result.ignored)
                    if rng.random() < 0.3:  # and again: taken once, whoever asks
                        again = memory.feedback(found.id, used=used)
                        if not again.already_given:
                            raise AssertionError(f"feedback on {found.id} was taken twice")
                        log.feedback_refused += 1
            elif roll < 0.95:
                memory.consolidate(scope=rng.choice(SCOPES))
            else:
                memory.sleep(scope=rng.choice(SCOPES))
        except Exception:  # every error is a finding: keep it, keep racing
            log.errors.append(traceback.format_exc(limit=8))
        log.ops += 1


def _write(
    memory: Memory,
    log: RaceLog,
    turns: Sequence[tuple[Scope, str]],
    *,
    at: datetime | None = None,
) -> None:
    results = memory.write_many([memory.turn(text, scope=scope, at=at) for scope, text in turns])
    for result in results:
        log.turns.add(result.episode_id)
        if result.created:
            log.created[result.episode_id] += 1
            note = result.note
            if note is not None and note.id != note_id(result.episode_id):
                log.merged[note.id] += 1  # a near-duplicate strengthened an existing note


def merge_logs(logs: Iterable[RaceLog]) -> RaceLog:
    total = RaceLog()
    for log in logs:
        total.created.update(log.created)
        total.turns |= log.turns
        total.touched.update(log.touched)
        total.merged.update(log.merged)
        total.used.update(log.used)
        total.ignored.update(log.ignored)
        total.feedback_taken += log.feedback_taken
        total.feedback_refused += log.feedback_refused
        total.ops += log.ops
        total.errors += log.errors
    return total


def race_problems(path: Path | str, log: RaceLog) -> list[str]:
    """What the store must hold after a race, from what the racers saw; empty when it does."""
    problems = [f"a racer raised:\n{e}" for e in log.errors[:3]]
    db = _connect(path)
    try:
        episodes = {r[0] for r in db.execute("SELECT id FROM episodes")}
        twice = {e: n for e, n in log.created.items() if n != 1}
        if twice:
            problems.append(f"turns reported as created more than once: {twice}")
        never = log.turns - set(log.created)
        if never:
            problems.append(f"turns no writer was told it created: {sorted(never)[:5]}")
        if episodes != log.turns:
            problems.append(
                "episodes differ from the turns written: missing "
                f"{sorted(log.turns - episodes)[:5]}, unexpected {sorted(episodes - log.turns)[:5]}"
            )
        counters = {
            rid: (kind, access, used, ignored)
            for rid, kind, access, used, ignored in db.execute(
                "SELECT id, kind, access_count, used_count, ignored_count FROM records"
            )
        }
    finally:
        db.close()
    for rid, (kind, access, used, ignored) in counters.items():
        # frequency is earned by use: a merge counts no access
        want = (log.touched[rid], log.used[rid], log.ignored[rid])
        got = (access, used, ignored)
        # A procedure is rewritten whole when a new request confirms it; a count that lands
        # on it during that very rewrite can be lost (see docs/guarantees.md, known limits),
        # but it can never count more than happened.
        lost_ok = kind == "procedure" and all(g <= w for g, w in zip(got, want))
        if got != want and not lost_ok:
            problems.append(
                f"{kind} {rid}: (access, used, ignored) = {got}, the racers counted {want}"
            )
    return problems + [f"store damaged: {p}" for p in integrity_problems(path)]


def describe(problems: Sequence[str], limit: int = 12) -> str:
    shown = "\n".join(problems[:limit])
    more = f"\n... and {len(problems) - limit} more" if len(problems) > limit else ""
    return shown + more


def read_json_lines(path: Path | str) -> Iterator[dict[str, Any]]:
    """Complete lines only: a line cut by a kill was never acknowledged."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.endswith("\n"):
                yield json.loads(line)
