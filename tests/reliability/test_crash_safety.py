"""A writer killed with SIGKILL at random moments loses nothing it acknowledged.

One store, many lives: each child process opens it, runs a sustained write and
consolidation workload (crash_child.py) and is killed at a random moment, from "while
creating the file" to "deep in a consolidation". After every kill the store must open,
pass SQLite's integrity check (and the full-text index's), and hold every write,
feedback and summary acknowledged before the kill, exactly as acknowledged.
"""

from __future__ import annotations

import collections
import random
import sqlite3
from pathlib import Path
from typing import Any

import crash_child
from reliability_support import (
    BUSY,
    SEED,
    SIZES,
    describe,
    integrity_problems,
    read_json_lines,
    tally,
    url_of,
)

from commonplace import Kind, Memory


def lost_acknowledgements(path: Path, acks: list[dict[str, Any]]) -> list[str]:
    """Every acknowledged operation that the store does not reflect."""
    db = sqlite3.connect(path)
    try:
        episodes = {
            eid: (list(parts), role, text)
            for eid, *parts, role, text in db.execute(
                "SELECT id, scope_user, scope_agent, scope_thread, role, text FROM episodes"
            )
        }
        records = {
            rid: (kind, used)
            for rid, kind, used in db.execute("SELECT id, kind, used_count FROM records")
        }
        uses = collections.Counter(
            r[0] for r in db.execute("SELECT ref FROM ledger_refs WHERE kind = 'use'")
        )
        orphans = db.execute(
            "SELECT r.id FROM records r WHERE r.kind = 'note' AND NOT EXISTS "
            "(SELECT 1 FROM provenance p JOIN episodes e ON e.id = p.source_id "
            "WHERE p.record_seq = r.seq)"
        ).fetchall()
    finally:
        db.close()
    lost: list[str] = [f"note {o[0]} has no episode behind it" for o in orphans]
    used_acked: collections.Counter[str] = collections.Counter()
    for ack in acks:
        if ack["op"] == "write":
            for turn in ack["turns"]:
                parts = [p or "" for p in turn["scope"]]
                if episodes.get(turn["ep"]) != (parts, turn["role"], turn["text"]):
                    lost.append(f"acknowledged episode {turn['ep']} ({turn['text']!r}) is missing")
                if turn["note"] is not None and turn["note"] not in records:
                    lost.append(f"acknowledged note {turn['note']} ({turn['text']!r}) is missing")
        elif ack["op"] == "feedback":
            used_acked.update(ack["used"])
        elif ack["op"] == "consolidate":
            lost += [
                f"acknowledged summary {s} is missing" for s in ack["made"] if s not in records
            ]
    for rid, n in used_acked.items():
        kind, used = records.get(rid, ("gone", 0))
        if used < n or uses[rid] < n:
            lost.append(
                f"{kind} {rid}: {n} acknowledged uses, the store counts {used} "
                f"(and logs {uses[rid]})"
            )
    return lost


def test_sigkill_at_random_moments_loses_nothing_acknowledged(tmp_path: Path) -> None:
    store, acks, errors = tmp_path / "memory.db", tmp_path / "acks.jsonl", tmp_path / "err.txt"
    acks.touch()
    rng = random.Random(SEED)
    for life in range(SIZES.kills):
        # a few lives end while the store is being opened (or created), most mid-workload
        delay = rng.uniform(0.0, 0.03) if rng.random() < 0.15 else rng.uniform(0.03, 0.6)
        crash_child.kill_after(
            delay,
            errors,
            crash_child.write_until_killed,
            str(store),
            str(acks),
            str(errors),
            SEED + life,
            life=life,
        )
        tally("kills survived")
        if not store.exists():
            continue  # killed before SQLite created the file
        problems = integrity_problems(store)
        assert not problems, f"after kill {life + 1}: {describe(problems)}"
        lost = lost_acknowledgements(store, list(read_json_lines(acks)))
        assert not lost, f"after kill {life + 1}, acknowledged work is gone:\n{describe(lost)}"
        with Memory(url_of(store), config=BUSY) as memory:  # it opens, and it reads
            memory.count(Kind.NOTE)
    acked = list(read_json_lines(acks))
    ops = collections.Counter(a["op"] for a in acked)
    tally(
        "acknowledged writes checked after kills",
        sum(len(a["turns"]) for a in acked if a["op"] == "write"),
    )
    # the kills hit a workload that was really running, not just processes starting up
    assert ops["open"] >= SIZES.kills // 2, ops
    assert ops["write"] >= SIZES.kills and ops["consolidate"] >= 1 and ops["feedback"] >= 1, ops
    # and after all of it, the store still takes writes, recalls and consolidates
    with Memory(url_of(store), config=BUSY) as memory:
        before = memory.count(Kind.EPISODE)
        memory.write("My sister Mia plays chess after all the crashes.", scope="ana")
        assert memory.count(Kind.EPISODE) == before + 1
        assert memory.recall("Mia chess", scope="ana").items
        memory.consolidate(scope="ana")
    assert integrity_problems(store) == []
