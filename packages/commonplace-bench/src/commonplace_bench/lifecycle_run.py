"""A year of simulated conversation through sleep and forget: what changes, what it costs.

A seeded persona talks for ``--turns`` user turns (with assistant replies in
between) over a simulated year: small talk and noise, trivia, people the user
keeps mentioning, repeated requests, and planted facts, some of which change
later. Then the lifecycle runs (tiers, consolidation, decay, ``forget_smart``)
and the store is measured before and after: file size, the records a recall
has to consider, and whether the current value of every planted fact still
reaches the compiled context.

Run: ``python -m commonplace_bench.lifecycle_run --turns 10000``.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from commonplace import Kind, ManualClock, Memory, Scope, Status
from commonplace.stores import RecordQuery

SCOPE = Scope(user="persona", thread="life")
START = datetime(2025, 1, 1, tzinfo=timezone.utc)
_PEOPLE = ["Mia", "Rui", "Joana", "Tomas", "Ines", "Pedro", "Clara", "Nuno"]
_RELATIONS = ["sister", "friend", "coworker", "cousin", "neighbour", "friend", "boss", "friend"]
_TRIVIA = [
    "I had toast for breakfast.",
    "I watched a show tonight.",
    "It rained all day.",
    "I took the bus today.",
    "I made coffee.",
    "I cleaned the kitchen.",
    "I went for a short walk.",
    "The wifi was slow today.",
]
_WHEN = [
    "this morning",
    "after lunch",
    "tonight",
    "before work",
    "at noon",
    "again",
    "with the radio on",
    "in a hurry",
    "slowly",
    "as usual",
    "for once",
    "late",
]
_NOISE = ["ok", "lol", "thanks", "hmm", "wait", "👍", "haha yes", "ok cool"]


@dataclass(frozen=True)
class Planted:
    query: str
    current: str


def simulate(memory: Memory, clock: ManualClock, *, turns: int, seed: int) -> list[Planted]:
    rng = random.Random(seed)
    planted: dict[str, Planted] = {}
    facts = [
        ("city", "I live in {v}.", ["Lisbon", "Porto", "Braga", "Faro"]),
        ("employer", "I work at {v}.", ["Feedzai", "Talkdesk", "Unbabel", "Sword"]),
        ("server", "Our staging server port is {v}.", ["8000", "8001", "8080", "9000"]),
        ("gym", "My gym locker code is {v}.", ["4471", "5512", "9921", "1034"]),
    ]
    step = timedelta(days=365) / max(1, turns)
    batch = []
    for n in range(turns):
        clock.advance(seconds=step.total_seconds())
        roll = rng.random()
        if roll < 0.002 * len(facts):  # planted facts, each updated a few times a year
            name, template, values = facts[rng.randrange(len(facts))]
            value = rng.choice(values)
            text = template.format(v=value)
            planted[name] = Planted(
                {
                    "city": "where do I live?",
                    "employer": "where do I work?",
                    "server": "which port is the staging server on?",
                    "gym": "what is my gym locker code?",
                }[name],
                value,
            )
        elif roll < 0.25:
            text = rng.choice(_NOISE)
        elif roll < 0.55:
            text = rng.choice(_TRIVIA).replace(".", f" {rng.choice(_WHEN)}.")
        elif roll < 0.8:
            k = rng.randrange(len(_PEOPLE))
            text = (
                f"My {_RELATIONS[k]} {_PEOPLE[k]} "
                f"{rng.choice(['called me', 'sent a photo', 'cooked dinner', 'got a cat'])}"
                f" on day {n}."
            )
        elif roll < 0.85:
            text = "Can you draft my weekly status report for the team?"
        else:
            text = f"I spent {rng.randint(1, 90)} minutes on hobby project {rng.randint(1, 40)}."
        # message ids, as a chat framework gives them: saying the same words again (going
        # back to an earlier job, say) is a new turn, not a resent one
        batch.append(memory.turn(text, scope=SCOPE, key=f"user-{n}"))
        batch.append(
            memory.turn(
                f"(assistant reply {n})", role="assistant", scope=SCOPE, key=f"assistant-{n}"
            )
        )
        if len(batch) >= 400:
            memory.write_many(batch)
            batch = []
    if batch:
        memory.write_many(batch)
    return list(planted.values())


@dataclass(frozen=True)
class Snapshot:
    file_mib: float
    considered: int
    evidence_recall: float
    context_tokens: float


def snapshot(memory: Memory, path: Path, planted: Sequence[Planted]) -> Snapshot:
    checkpoint = sqlite3.connect(path)
    checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    checkpoint.close()
    considered = sum(
        1
        for _ in memory.store.iter_records(
            RecordQuery(
                scope=Scope(user="persona"),
                kinds=(Kind.NOTE, Kind.SUMMARY, Kind.PROCEDURE),
                statuses=(Status.ACTIVE,),
            )
        )
    )
    hits, tokens = 0, 0
    for fact in planted:
        recall = memory.recall(fact.query, scope=SCOPE)
        hits += fact.current in recall.render()
        tokens += recall.tokens
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 2**20
    return Snapshot(
        round(size, 1), considered, hits / max(1, len(planted)), tokens / max(1, len(planted))
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "life.db"
        clock = ManualClock(START)
        with Memory(f"sqlite:///{path}", clock=clock) as memory:
            t = time.perf_counter()
            planted = simulate(memory, clock, turns=args.turns, seed=args.seed)
            write_s = time.perf_counter() - t
            before = snapshot(memory, path, planted)
            t = time.perf_counter()
            report = memory.sleep(scope=Scope(user="persona"))
            forgot = memory.forget_smart(scope=Scope(user="persona"))
            lifecycle_s = time.perf_counter() - t
        db = sqlite3.connect(path)  # give freed pages back, so sizes compare
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        with Memory(f"sqlite:///{path}", clock=clock) as memory:
            after = snapshot(memory, path, planted)
        print(
            f"{args.turns:,} user turns (+ as many assistant replies) written in "
            f"{write_s:.1f} s; lifecycle ran in {lifecycle_s:.1f} s\n"
        )
        print(
            f"lifecycle actions: {report.counts()}; forget_smart removed "
            f"{len(forgot.actions)} notes\n"
        )
        print(
            "| | store MiB | records recall considers | evidence recall of planted facts "
            "| context tokens |"
        )
        print("|---|---:|---:|---:|---:|")
        for name, snap in (("before", before), ("after", after)):
            print(
                f"| {name} | {snap.file_mib} | {snap.considered:,} | "
                f"{snap.evidence_recall:.0%} | {snap.context_tokens:.0f} |"
            )


if __name__ == "__main__":
    main()
