"""A write batch is all or nothing: SIGKILL at any moment of ``write_many`` leaves a batch's
episodes, notes, links, conflicts, update audit and profile card all stored, or none.

The writer (``crash_child.write_batches_until_killed``) writes batches of four turns that
each bring every kind of consequence: notes, a session link from each note to the one
before, a conflict (a coworker Mia against the sister Mia of the first batch), a
supersession (where the user lives) with its audit entry, and a rewritten profile card
(rewritten after every batch). After each kill the SQLite file must show whole batches
only: a card that has seen every note, every note linked to the one before it, every
coworker-Mia note in a conflict, every supersession audited.
"""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
from pathlib import Path

import crash_child
from reliability_support import SEED, SIZES, describe, integrity_problems, tally

from commonplace import Scope
from commonplace.stores import PROFILE_CARD
from commonplace.stores._entries import card_key

# a third of the main kill test's lives: each is a few batches, and the check reads it all
KILLS = max(10, SIZES.kills // 3)


def torn_batches(path: Path) -> list[str]:
    """What the store shows of a batch committed in part (empty when every batch is
    whole)."""
    db = sqlite3.connect(path)
    try:
        episodes = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
        notes = db.execute(
            "SELECT id, text, created_at, superseded_by FROM records WHERE kind = 'note' "
            "AND status = 'active' ORDER BY seq"
        ).fetchall()
        links = {
            (a, b, kind)
            for a, b, kind in db.execute(
                "SELECT ea.id, eb.id, l.kind FROM links l JOIN link_ends ea ON ea.n = l.a "
                "JOIN link_ends eb ON eb.n = l.b"
            )
        }
        conflicts = {
            ref for (ref,) in db.execute("SELECT ref FROM ledger_refs WHERE kind = 'conflict'")
        }
        audited = {
            json.loads(data)["record_id"]
            for (data,) in db.execute("SELECT data FROM ledger WHERE kind = 'audit'")
        }
        card = db.execute(
            "SELECT data FROM ledger WHERE kind = 'card' AND key = ?",
            (card_key(Scope(user="ana"), PROFILE_CARD),),
        ).fetchone()
    finally:
        db.close()
    torn: list[str] = []
    if episodes % crash_child.BATCH:
        torn.append(f"{episodes} episodes: not whole batches of {crash_child.BATCH}")
    seen = 0 if card is None else json.loads(card[0])["data"]["notes_seen"]
    if seen != len(notes):
        torn.append(f"the profile card has seen {seen} notes, the store holds {len(notes)}")
    for (earlier, *_), (later, *_) in itertools.pairwise(notes):
        if (min(earlier, later), max(earlier, later), "session") not in links:
            torn.append(f"note {later} is not linked to the note before it, {earlier}")
    sister = [rid for rid, text, *_ in notes if "sister Mia" in text]
    for rid, text, *_ in notes:
        if sister and "coworker Mia" in text and rid not in conflicts:
            torn.append(f"note {rid} ({text!r}) names a second Mia and opened no conflict")
    for rid, text, _, superseded_by in notes:
        if superseded_by is not None and rid not in audited:
            torn.append(f"note {rid} ({text!r}) was superseded without an audit entry")
    return torn


def test_sigkill_during_write_many_leaves_whole_batches(tmp_path: Path) -> None:
    store, errors = tmp_path / "memory.db", tmp_path / "err.txt"
    rng = random.Random(SEED)
    for life in range(KILLS):
        writer = crash_child.write_batches_until_killed
        delay = rng.uniform(0.05, 1.5)
        crash_child.kill_after(delay, errors, writer, str(store), str(errors), life=life)
        tally("batch writers killed")
        if not store.exists():
            continue
        assert integrity_problems(store) == []
        torn = torn_batches(store)
        assert not torn, f"after kill {life + 1}, a batch is stored in part:\n{describe(torn)}"
    db = sqlite3.connect(store)
    try:
        episodes = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
        superseded = db.execute(
            "SELECT count(*) FROM records WHERE superseded_by IS NOT NULL"
        ).fetchone()[0]
    finally:
        db.close()
    # the kills hit batches being written, not only processes starting up, and the
    # batches brought what the checks look for
    assert episodes >= 4 * crash_child.BATCH and superseded >= 2, (episodes, superseded)
    tally("batches checked whole after kills", episodes // crash_child.BATCH)


def test_the_check_finds_a_batch_stored_in_part(tmp_path: Path) -> None:
    """The checker is not blind: a store whose last batch lost its card and links (what
    a write committed in two steps would leave after a kill between them) is caught."""
    store, errors = tmp_path / "memory.db", tmp_path / "err.txt"
    crash_child.kill_after(
        2.0, errors, crash_child.write_batches_until_killed, str(store), str(errors)
    )
    assert torn_batches(store) == []
    db = sqlite3.connect(store)
    with db:
        last = db.execute("SELECT max(seq) FROM records WHERE kind = 'note'").fetchone()[0]
        db.execute(
            "DELETE FROM links WHERE a = (SELECT n FROM link_ends WHERE id = "
            "(SELECT id FROM records WHERE seq = ?)) OR b = (SELECT n FROM link_ends "
            "WHERE id = (SELECT id FROM records WHERE seq = ?))",
            (last, last),
        )
        db.execute("DELETE FROM ledger WHERE kind = 'card'")
    db.close()
    torn = torn_batches(store)
    assert any("profile card" in t for t in torn) and any("not linked" in t for t in torn), torn
