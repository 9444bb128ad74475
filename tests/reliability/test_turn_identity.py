"""One turn, one episode: a turn is its scope, role, time and words (or its message key).

Hypothesis writes turns drawn from a small pool, so that the same words come back in the
same scope at other times, the same turn is retried (again, later, in the same batch or
another), and keyed messages are sent again at another time. After every batch the store
must hold one episode per turn as that rule counts them, each write must be told
``created`` exactly when its turn is new, and the same words said again by the user must
be evidence of the one note they repeat (the second day's turn is not lost: it counts).
"""

from __future__ import annotations

import sqlite3
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from reliability_support import SIZES, profile, tally, url_of

from commonplace import ManualClock, Memory, Scope

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
SCOPES = (Scope(user="ana"), Scope(user="ana", thread="t1"), Scope(user="bob", agent="coach"))
ROLES = ("user", "user", "assistant")
TEXTS = (
    "Long shift again today.",
    "I love hiking in the Alps.",
    "My sister Mia is a nurse.",
    "yes",
)
NOTED = TEXTS[1:3]  # the texts the rule writer makes a note of
# a turn: which scope, role and words, when (minutes after START; some on other days), and
# its message key (None: known by its time and words)
TURN = st.tuples(
    st.integers(0, len(SCOPES) - 1),
    st.sampled_from(ROLES),
    st.integers(0, len(TEXTS) - 1),
    st.sampled_from([0, 1, 60 * 24, 60 * 24 * 2 + 5]),
    st.sampled_from([None, None, "m1", "m2"]),
)


def _identity(turn: tuple[int, str, int, int, str | None]) -> tuple[object, ...]:
    scope, role, text, minutes, key = turn
    return (scope, role, key) if key is not None else (scope, role, minutes, text)


@given(batches=st.lists(st.lists(TURN, min_size=1, max_size=5), min_size=1, max_size=8))
@profile(SIZES.fuzz_examples)
def test_one_episode_per_turn_and_repeats_count(
    batches: list[list[tuple[int, str, int, int, str | None]]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "turns.db"
        clock = ManualClock(START + timedelta(days=10))
        seen: dict[tuple[object, ...], str] = {}
        words: dict[tuple[object, ...], int] = {}
        with Memory(url_of(path), clock=clock) as memory:
            for batch in batches:
                turns = [
                    memory.turn(
                        TEXTS[text],
                        role=role,
                        scope=SCOPES[scope],
                        at=START + timedelta(minutes=minutes),
                        key=key,
                    )
                    for scope, role, text, minutes, key in batch
                ]
                results = memory.write_many(turns)
                for turn, result in zip(batch, results):
                    identity = _identity(turn)
                    # created exactly when the turn is new; the same turn, the same id
                    assert result.created == (identity not in seen), (turn, result)
                    assert seen.setdefault(identity, result.episode_id) == result.episode_id
                    words.setdefault(identity, turn[2])  # a key's first words are its words
                    tally("turn identity: writes checked")
            db = sqlite3.connect(path)
            try:
                stored = {r[0] for r in db.execute("SELECT id FROM episodes")}
                held = dict(
                    db.execute(
                        "SELECT p.source_id, r.id FROM provenance AS p "
                        "JOIN records AS r ON r.seq = p.record_seq WHERE r.kind = 'note'"
                    ).fetchall()
                )
            finally:
                db.close()
            assert stored == set(seen.values())
            # the same words by the user in one scope are evidence of one note: each time
            # they were said counts there (a retry does not: it is one episode)
            said: dict[tuple[int, int], set[str]] = {}
            for identity, eid in seen.items():
                scope, role = identity[0], identity[1]
                if role == "user" and TEXTS[words[identity]] in NOTED:
                    said.setdefault((int(scope), words[identity]), set()).add(eid)  # type: ignore[call-overload]
            for (scope, text), episodes in said.items():
                notes = {held.get(e) for e in episodes}
                assert len(notes) == 1 and None not in notes, (SCOPES[scope], TEXTS[text], notes)
                tally("turn identity: repeats counted", len(episodes))
            tally("turn identity: stores checked")
